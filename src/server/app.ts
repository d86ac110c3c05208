import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { EndpointDef } from '../contract/endpoint.js';
import type { ModuleContext, Services } from './app-context.js';
import type { ServerConfig } from './config.js';
import { applyMigrations, openDatabase, type Db } from './db/connection.js';
import { startWalCheckpoints } from './db/checkpoint.js';
import { groupCommits, type GroupCommit } from './db/group-commit.js';
import { Mailer } from './delivery/mailer.js';
import { OutboundClient } from './delivery/outbound.js';
import { SmsSender } from './delivery/sms.js';
import { bind, type Handler, type ResponseCache, type RouteHooks } from './http/bind.js';
import { clientIpResolver, trustedProxyMatcher } from './http/client-ip.js';
import { installErrorHandler } from './http/error-handler.js';
import { mutationTurns } from './http/mutation-turn.js';
import { installReplyRelease } from './http/reply-release.js';
import { installJsonBodyParser } from './http/json-body.js';
import { anonymous, bearerToken, createGuard, createNotFoundKeyCheck, type CredentialResolvers } from './http/guard.js';
import { createIdempotency, purgeIdempotencyKeys } from './http/idempotency.js';
import { JobWorker } from './jobs/queue.js';
import { ReadCache } from './lib/read-cache.js';
import { loggerOptions } from './logging.js';
import { registerAccessReviewRoutes } from './modules/access-reviews/routes.js';
import { AlertsService } from './modules/alerts/alerts-service.js';
import { ensureBuiltinAlertTemplates } from './modules/alerts/builtin-templates.js';
import { CorrelationService } from './modules/alerts/correlation.js';
import { AlertEvaluator } from './modules/alerts/evaluator.js';
import { LegacyAlertRules } from './modules/alerts/legacy-rules.js';
import { MetricsIngest } from './modules/alerts/metrics.js';
import { registerAlertRoutes } from './modules/alerts/routes.js';
import { AlertRulesService } from './modules/alerts/rules-service.js';
import { AccessReviewsService } from './modules/access-reviews/service.js';
import { registerApiKeyRoutes } from './modules/api-keys/routes.js';
import { ApiKeyAuthenticator } from './modules/api-keys/authenticator.js';
import { ApiKeysService } from './modules/api-keys/service.js';
import { registerAuditRoutes } from './modules/audit/routes.js';
import { AuditService } from './modules/audit/service.js';
import { registerDeviceRoutes } from './modules/devices/routes.js';
import { AgentAuthenticator } from './modules/devices/agent-authenticator.js';
import { DevicesService } from './modules/devices/service.js';
import { registerEnrollmentKeyRoutes } from './modules/enrollment-keys/routes.js';
import { EnrollmentKeysService } from './modules/enrollment-keys/service.js';
import { registerHealthRoutes } from './modules/health/routes.js';
import { AccountService } from './modules/identity/account-service.js';
import { AuthService } from './modules/identity/auth-service.js';
import { ensureBuiltinRoles } from './modules/identity/builtin-roles.js';
import { Directory } from './modules/identity/directory.js';
import { ensureSystemAdmin } from './modules/identity/first-start.js';
import { MfaService } from './modules/identity/mfa-service.js';
import { RegistrationService } from './modules/identity/registration-service.js';
import { registerIdentityRoutes } from './modules/identity/routes.js';
import { SmsService } from './modules/identity/sms-service.js';
import { ChannelsService } from './modules/notifications/channels.js';
import { DeliveryRecords } from './modules/notifications/deliveries.js';
import { InboxService } from './modules/notifications/inbox.js';
import { AlertNotifier } from './modules/notifications/pipeline.js';
import { PoliciesService } from './modules/notifications/policies.js';
import { Senders } from './modules/notifications/senders.js';
import { registerNotificationRoutes } from './modules/notifications/routes.js';
import { registerPamRoutes } from './modules/pam/routes.js';
import { PamService } from './modules/pam/service.js';
import { SessionService } from './modules/identity/sessions.js';
import { registerRoleRoutes } from './modules/roles/routes.js';
import { RolesService } from './modules/roles/service.js';
import { SsoLoginService } from './modules/sso/login-service.js';
import { registerSsoRoutes } from './modules/sso/routes.js';
import { SsoProvidersService } from './modules/sso/service.js';
import { registerTenancyRoutes } from './modules/tenancy/routes.js';
import { TenancyService } from './modules/tenancy/service.js';
import { registerUserRoutes } from './modules/users/routes.js';
import { UsersService } from './modules/users/service.js';
import { registerDeviceCommandRoutes } from './modules/device-commands/routes.js';
import { DeviceCommandsService } from './modules/device-commands/service.js';
import { registerScriptRoutes } from './modules/scripts/routes.js';
import { ScriptsService } from './modules/scripts/service.js';
import { MobileService } from './modules/mobile/service.js';
import { registerMobileRoutes } from './modules/mobile/routes.js';
import { registerDeviceLogRoutes } from './modules/device-logs/routes.js';
import { registerSoftwareRoutes } from './modules/software/routes.js';
import { registerWebhookFailureNotices } from './modules/notifications/webhook-notices.js';
import { registerWebPages } from './modules/web-pages/routes.js';
import { WebhookDispatcher } from './modules/webhooks/delivery.js';
import { registerWebhookRoutes } from './modules/webhooks/routes.js';
import { WebhooksService } from './modules/webhooks/service.js';
import { CredentialVault } from './modules/psa/connections.js';
import { registerPsaRoutes } from './modules/psa/routes.js';
import { PsaService } from './modules/psa/service.js';
import { PsaTicketing } from './modules/psa/ticketing.js';
import { registerFilterRoutes } from './modules/filters/routes.js';
import { FiltersService } from './modules/filters/service.js';
import { registerGroupRoutes } from './modules/groups/routes.js';
import { GroupsService } from './modules/groups/service.js';
import { registerSearchRoutes } from './modules/search/routes.js';
import { SearchService } from './modules/search/service.js';
import { registerIntegrationRoutes } from './modules/integrations/routes.js';
import { IntegrationsService } from './modules/integrations/service.js';
import { SecretBox } from './security/crypto.js';
import { loadServerSecrets, type ServerSecrets } from './security/server-secrets.js';
import { TokenSigner } from './security/tokens.js';

export interface BuildOptions {
  /** Where first-start messages (the generated admin password) go; stderr by default. */
  announce?: (message: string) => void;
  /** Fastify logger settings; tests pass false. */
  logger?: FastifyServerOptions['logger'];
  /** An already open database (tests); otherwise config.databaseFile is opened. */
  db?: Db;
  /** Create the system administrator on an empty database (default true). `svc server start` passes false and
   * calls ensureSystemAdmin itself once its socket is bound (server.ts). */
  firstStart?: boolean;
}

export interface BuiltApp {
  app: FastifyInstance;
  db: Db;
  services: Services;
  worker: JobWorker;
  /** The connection's group commit (db/group-commit.ts). */
  commits: GroupCommit;
}

/** Builds the whole service as one Fastify instance: database, services, routes. Used by tests through
 * `inject` and by `svc server start` through server.ts. The worker is created but not started. */
export async function buildApp(config: ServerConfig, options: BuildOptions = {}): Promise<BuiltApp> {
  const db = options.db ?? openDatabase(config.databaseFile);
  let secrets: ServerSecrets;
  try {
    applyMigrations(db);
    // Checked against the database: keys that cannot read its data stop the start (server-secrets.ts).
    secrets = loadServerSecrets(config.dataDir, config.secrets, db.$client);
  } catch (err) {
    if (!options.db) db.$client.close();
    throw err;
  }
  ensureBuiltinRoles(db);
  ensureBuiltinAlertTemplates(db);
  if (options.firstStart !== false)
    await ensureSystemAdmin(db, config, options.announce ?? ((m) => process.stderr.write(`${m}\n`)));

  const isTrusted = trustedProxyMatcher(config.trustedProxies);
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustedProxies.length > 0 ? (address: string) => isTrusted(address) : false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
    genReqId: () => randomUUID(),
    // Fastify's 10 s default failed a start on a busy 2-core machine ("Plugin did not start in time"); our plugins
    // do no I/O while loading, so a slow load is CPU starvation, not a hang worth failing for.
    pluginTimeout: 120_000,
  });
  await app.register(fastifyCookie);
  installJsonBodyParser(app);
  // The transactions of one event-loop turn commit together, no reply leaves before its commit, and the replies
  // of a turn leave together at its end.
  const commits = groupCommits(db.$client, (err) => app.log.error({ err }, 'group commit failed'));
  installReplyRelease(app, commits);

  const box = new SecretBox(secrets.encryptionKey);
  const signer = new TokenSigner(secrets.jwtSecret);
  const worker = new JobWorker(db, config.jobs.pollMs, (err, job) => app.log.error({ err, jobId: job?.id, jobType: job?.type }, 'job failed'));
  const sessions = new SessionService(db, signer, { accessTtlSeconds: config.tokens.accessTtlSeconds, refreshTtlSeconds: config.tokens.refreshTtlSeconds });
  const auth = new AuthService(db, config, sessions, signer);
  const tenancy = new TenancyService(db);
  const apiKeyAuth = new ApiKeyAuthenticator(db, (err) => app.log.error({ err }, 'API key usage flush failed'));
  const apiKeys = new ApiKeysService(db, apiKeyAuth.usage);
  const enrollmentKeys = new EnrollmentKeysService(db, secrets.enrollmentPepper, config.enrollment.keyTtlMinutes);
  const mailer = new Mailer(config.mail, app.log);
  const sms = new SmsSender(config.sms, app.log);
  const outbound = new OutboundClient({ allow: config.outbound.allow });
  if (config.outbound.allow.length)
    app.log.warn({ allow: config.outbound.allow }, 'SVC_OUTBOUND_ALLOW lets outgoing requests reach these private ranges');
  const directory = new Directory(db);
  const roles = new RolesService(db, directory, tenancy);
  const devices = new DevicesService(db, tenancy, enrollmentKeys);
  const smsMfa = new SmsService(db, config, sms, auth, signer, secrets.jwtSecret);
  const registration = new RegistrationService(db, config, auth, tenancy);
  const webhookDispatcher = new WebhookDispatcher(db, box, outbound, config.webhooks.timeScale);
  webhookDispatcher.register(worker);
  webhookDispatcher.onError = (err) => app.log.warn({ err }, 'webhook delivery failed');
  const inbox = new InboxService(db);
  const senders = new Senders(mailer, outbound, { publicUrl: config.publicUrl, alerting: config.alerting });
  const alertChannels = new ChannelsService(db, box, tenancy, senders);
  const escalationPolicies = new PoliciesService(db, tenancy, alertChannels);
  const alertDeliveries = new DeliveryRecords(db);
  const alertRules = new AlertRulesService(db);
  // GET /alerts/:id shows the sends the notification pipeline recorded for the alert.
  const alerts = new AlertsService(db, alertRules, devices, alertDeliveries);
  const alertCorrelations = new CorrelationService(db, alerts);
  const ssoWarn = (details: Record<string, unknown>, message: string) => app.log.warn(details, message);
  const sso = new SsoProvidersService(db, box, roles, directory, { fetch: outbound.fetch, allowHttp: false }, ssoWarn);
  // 01 §5.12: enforceSSO refuses password sign-in to the organization's users.
  auth.passwordLoginCheck = (user) => sso.refusePasswordLogin(user);
  // 02 §2.8: PSA credentials sealed under the server key; tickets for alerts opened by the worker.
  const psaVault = new CredentialVault(box, outbound);
  new PsaTicketing(db, psaVault, config.publicUrl).register(worker);
  const filters = new FiltersService(db, tenancy, devices);
  const groups = new GroupsService(db, tenancy, devices, filters);
  // Dynamic group membership follows device changes (a coalesced durable job per organization).
  devices.onDeviceChanged = (_deviceId, orgId) => groups.deviceChanged(orgId);
  const deviceCommands = new DeviceCommandsService(db, box, devices);
  const users = new UsersService(db, config, directory, roles, tenancy, sessions, mailer);
  const services: Services = {
    tenancy,
    sessions,
    auth,
    mfa: new MfaService(db, config, box, signer, auth, sessions, tenancy, smsMfa),
    smsMfa,
    account: new AccountService(db, config, auth, sessions, directory, mailer, app.log),
    registration,
    audit: new AuditService(db),
    apiKeys,
    apiKeyAuth,
    enrollmentKeys,
    devices,
    agentAuth: new AgentAuthenticator(db),
    mailer,
    sms,
    directory,
    roles,
    users,
    // A review's revoked item is refused as the users module refuses a removal (self, a user beyond the caller).
    accessReviews: new AccessReviewsService(db, directory, sessions, users),
    pam: new PamService(db, config, box, { auth, tenancy, devices, directory }),
    inbox,
    alertChannels,
    escalationPolicies,
    alertDeliveries,
    outbound,
    webhooks: new WebhooksService(db, box, outbound, webhookDispatcher),
    alertRules,
    alerts,
    alertMetrics: new MetricsIngest(db, devices),
    alertEvaluator: new AlertEvaluator(db, alertRules, alerts, devices, alertCorrelations),
    alertRulesLegacy: new LegacyAlertRules(db, alertRules, new AlertEvaluator(db, alertRules, alerts, devices, alertCorrelations), devices, (id) => alertChannels.channelById(id)),
    alertCorrelations,
    sso,
    ssoLogin: new SsoLoginService(db, box, config, sso, auth, directory, ssoWarn),
    psa: new PsaService(db, psaVault, tenancy, outbound),
    filters,
    groups,
    search: new SearchService(db, devices),
    integrations: new IntegrationsService(db, box, tenancy, outbound),
    deviceCommands,
    scripts: new ScriptsService(db, devices, deviceCommands),
    // 02 §2.10, §4.6; pushes reach the users the alert pipeline notifies who may read alerts.
    mobile: new MobileService(db, config.mobilePush, {
      alerts,
      devices,
      deviceCommands,
      outbound,
      scripts: () => services.scripts,
      pam: () => services.pam,
      recipientsOf: (orgId) => alertNotifier.recipientsOf(orgId, 'alerts:read'),
    }),
  };

  const resolvers: CredentialResolvers = {
    session: (token) => auth.callerForAccessToken(token),
    apiKey: async (key) => apiKeyAuth.authenticate(key),
    agent: async (token) => services.agentAuth.authenticate(token),
  };
  installErrorHandler(app, createNotFoundKeyCheck(resolvers));
  const clientIp = clientIpResolver(isTrusted, config.trustedProxies.length > 0);
  const guard = createGuard({
    resolvers,
    mfaEnabled: config.features.mfa,
    clientIp,
  });
  // GET answers kept until the next write, at most a second (fields derived from the clock, such as an expired
  // status, are that fresh), at most 128 of them.
  const responses: ResponseCache = new ReadCache(db.$client, 128, 1000);
  const bindDeps = { guard, idempotency: createIdempotency(db, box), responses, mutationTurn: mutationTurns(commits) };
  const moduleContext: ModuleContext = {
    app,
    config,
    db,
    secrets,
    box,
    signer,
    worker,
    services,
    anonymousContext: (request) => anonymous(request, clientIp(request)),
    bearerToken,
    clientIp,
    route: <E extends EndpointDef>(def: E, handler: Handler<E>, hooks?: RouteHooks) => bind(app, bindDeps, def, handler, hooks),
  };

  registerHealthRoutes(moduleContext);
  registerIdentityRoutes(moduleContext);
  registerTenancyRoutes(moduleContext);
  registerAuditRoutes(moduleContext);
  registerApiKeyRoutes(moduleContext);
  registerEnrollmentKeyRoutes(moduleContext);
  registerDeviceRoutes(moduleContext);
  registerUserRoutes(moduleContext);
  registerRoleRoutes(moduleContext);
  registerAccessReviewRoutes(moduleContext);
  registerPamRoutes(moduleContext);
  registerWebhookRoutes(moduleContext);
  registerAlertRoutes(moduleContext);
  registerNotificationRoutes(moduleContext);
  registerSsoRoutes(moduleContext);
  registerIntegrationRoutes(moduleContext);
  registerWebPages(moduleContext);
  registerPsaRoutes(moduleContext);
  registerFilterRoutes(moduleContext);
  registerGroupRoutes(moduleContext);
  registerSearchRoutes(moduleContext);
  registerDeviceCommandRoutes(moduleContext);
  registerScriptRoutes(moduleContext);
  registerMobileRoutes(moduleContext);
  registerDeviceLogRoutes(moduleContext);
  registerSoftwareRoutes(moduleContext);
  services.scripts.ensureSystemLibrary();
  // 05 wire notes "4.5": scripts are a /search category (title the name, description the script's description).
  services.search.register({
    type: 'scripts',
    permission: 'scripts:read',
    search: (ctx, q, limit) =>
      services.scripts.search(ctx, q, limit).map((s) => ({ id: s.id, type: 'scripts' as const, title: s.name, description: s.description ?? '' })),
  });
  apiKeyAuth.start();
  // WAL checkpoints in a worker thread on a timer, not inside a request's commit nor on the event loop (db/checkpoint.ts).
  const walCheckpoints = startWalCheckpoints(db.$client, { onError: (err) => app.log.warn({ err }, 'WAL checkpoint failed') });

  const alertNotifier = new AlertNotifier(db, { tenancy, directory, inbox, channels: alertChannels, policies: escalationPolicies, deliveries: alertDeliveries, senders, publicUrl: config.publicUrl, alertStatus: (id) => alerts.byIds([id])[0]?.status, timeScale: config.alerts.timeScale });
  alertNotifier.register(worker);
  services.mobile.push.register(worker);
  registerWebhookFailureNotices(worker, db, { inbox, recipientsOf: (orgId, permission) => alertNotifier.recipientsOf(orgId, permission), publicUrl: config.publicUrl });
  services.integrations.register(worker);

  worker.every('maintenance.purge-idempotency-keys', 3600_000, () => {
    purgeIdempotencyKeys(db);
  });

  app.addHook('onClose', async () => {
    // API key usage counted since the last flush is written before the database closes.
    apiKeyAuth.stop();
    await worker.stop();
    mailer.close();
    outbound.close();
    // What the steps above wrote is committed, and the connection commits each transaction at once again.
    commits.stop();
    await walCheckpoints.stop();
    if (!options.db) db.$client.close();
  });
  // What the start wrote (built-in rows, the system script library) is committed before anyone uses the app.
  commits.flush();
  return { app, db, services, worker, commits };
}
