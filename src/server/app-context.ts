import type { LegacyAlertRules } from './modules/alerts/legacy-rules.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { EndpointDef } from '../contract/endpoint.js';
import type { ServerConfig } from './config.js';
import type { RequestContext } from './context.js';
import type { Db } from './db/connection.js';
import type { Handler, RouteHooks } from './http/bind.js';
import type { Mailer } from './delivery/mailer.js';
import type { OutboundClient } from './delivery/outbound.js';
import type { SmsSender } from './delivery/sms.js';
import type { JobWorker } from './jobs/queue.js';
import type { AccessReviewsService } from './modules/access-reviews/service.js';
import type { AlertsService } from './modules/alerts/alerts-service.js';
import type { CorrelationService } from './modules/alerts/correlation.js';
import type { AlertEvaluator } from './modules/alerts/evaluator.js';
import type { MetricsIngest } from './modules/alerts/metrics.js';
import type { AlertRulesService } from './modules/alerts/rules-service.js';
import type { ApiKeyAuthenticator } from './modules/api-keys/authenticator.js';
import type { ApiKeysService } from './modules/api-keys/service.js';
import type { AuditService } from './modules/audit/service.js';
import type { AgentAuthenticator } from './modules/devices/agent-authenticator.js';
import type { DevicesService } from './modules/devices/service.js';
import type { EnrollmentKeysService } from './modules/enrollment-keys/service.js';
import type { AccountService } from './modules/identity/account-service.js';
import type { AuthService } from './modules/identity/auth-service.js';
import type { MfaService } from './modules/identity/mfa-service.js';
import type { RegistrationService } from './modules/identity/registration-service.js';
import type { SmsService } from './modules/identity/sms-service.js';
import type { ChannelsService } from './modules/notifications/channels.js';
import type { DeliveryRecords } from './modules/notifications/deliveries.js';
import type { InboxService } from './modules/notifications/inbox.js';
import type { PoliciesService } from './modules/notifications/policies.js';
import type { PamService } from './modules/pam/service.js';
import type { Directory } from './modules/identity/directory.js';
import type { SessionService } from './modules/identity/sessions.js';
import type { RolesService } from './modules/roles/service.js';
import type { SsoLoginService } from './modules/sso/login-service.js';
import type { SsoProvidersService } from './modules/sso/service.js';
import type { TenancyService } from './modules/tenancy/service.js';
import type { UsersService } from './modules/users/service.js';
import type { WebhooksService } from './modules/webhooks/service.js';
import type { PsaService } from './modules/psa/service.js';
import type { FiltersService } from './modules/filters/service.js';
import type { GroupsService } from './modules/groups/service.js';
import type { SearchService } from './modules/search/service.js';
import type { IntegrationsService } from './modules/integrations/service.js';
import type { DeviceCommandsService } from './modules/device-commands/service.js';
import type { ScriptsService } from './modules/scripts/service.js';
import type { MobileService } from './modules/mobile/service.js';
import type { SecretBox } from './security/crypto.js';
import type { ServerSecrets } from './security/server-secrets.js';
import type { TokenSigner } from './security/tokens.js';

/** The services of every module, created once per app. A module reaches another only through these. */
export interface Services {
  tenancy: TenancyService;
  sessions: SessionService;
  auth: AuthService;
  mfa: MfaService;
  /** Phone verification and SMS codes (01 §4.5); `sms` is the gateway it sends through. */
  smsMfa: SmsService;
  account: AccountService;
  registration: RegistrationService;
  audit: AuditService;
  apiKeys: ApiKeysService;
  apiKeyAuth: ApiKeyAuthenticator;
  enrollmentKeys: EnrollmentKeysService;
  devices: DevicesService;
  agentAuth: AgentAuthenticator;
  mailer: Mailer;
  sms: SmsSender;
  directory: Directory;
  roles: RolesService;
  users: UsersService;
  accessReviews: AccessReviewsService;
  pam: PamService;
  /** 02 §2.5 in-app notifications. */
  inbox: InboxService;
  /** 02 §2.4 notification channels (`/alerts/channels`) and their test sends. */
  alertChannels: ChannelsService;
  /** 02 §2.6 escalation policies (`/alerts/policies`). */
  escalationPolicies: PoliciesService;
  /** 02 §3 notification deliveries; `forAlert` is the alerts module's AlertDeliveryLog (ALERT-EVENTS.md). */
  alertDeliveries: DeliveryRecords;
  /** Every request to a URL a caller gave (webhooks, SSO, alert channels) goes through this guard. */
  outbound: OutboundClient;
  webhooks: WebhooksService;
  /** Alert templates and rules, alerts, agent metrics, the evaluator and correlation (02 §2.1-2.3, §3, §4.1). */
  alertRules: AlertRulesService;
  alerts: AlertsService;
  alertMetrics: MetricsIngest;
  alertEvaluator: AlertEvaluator;
  alertRulesLegacy: LegacyAlertRules;
  alertCorrelations: CorrelationService;
  /** SSO providers and enforcement (01 §2.9, §4.7, §5.12). */
  sso: SsoProvidersService;
  /** OpenID Connect sign-in and the ssoCode exchange (01 §5.9, §5.10). */
  ssoLogin: SsoLoginService;
  /** PSA connections, their credentials test and sync, and the ticket lists (02 §2.8, §4.4). */
  psa: PsaService;
  /** Saved filters and previews (02 §2.9, §4.5); the filter compiler is modules/filters/compile.ts. */
  filters: FiltersService;
  /** Static and dynamic device groups, pins, membership log (05 wire notes "4.7"). */
  groups: GroupsService;
  /** GET /search; other modules add their category with `search.register` (02 §4.5). */
  search: SearchService;
  /** 02 §4.4 integrations: chat providers, monitoring, ticketing, legacy PSA settings. */
  integrations: IntegrationsService;
  /** Commands queued for devices' agents, fetched and answered by the agents (03 §4.7). */
  deviceCommands: DeviceCommandsService;
  /** Scripts, their runs on devices and the custom-field output marker (03 §4.6, §4.7). */
  scripts: ScriptsService;
  /** The mobile interface: phones, push, inbox, actions, approvals (02 §2.10, §4.6). */
  mobile: MobileService;
}

/** Hooks of one route only (http/bind.ts), for the route bindings of modules, which do not reach http/. */
export type { RouteHooks };

/** What a module's route registration receives. */
export interface ModuleContext {
  app: FastifyInstance;
  config: ServerConfig;
  db: Db;
  secrets: ServerSecrets;
  box: SecretBox;
  signer: TokenSigner;
  worker: JobWorker;
  services: Services;
  /** The context of a request without credentials, with the client address (pages outside the contract). */
  anonymousContext: (request: FastifyRequest) => RequestContext;
  /** The bearer token of a request, parsed as the guard parses it (public routes that accept a session). */
  bearerToken: (request: FastifyRequest) => string | null;
  /** The client's address as the server trusts it (behind trusted proxies, the forwarded one). */
  clientIp: (request: FastifyRequest) => string | null;
  /** Binds one contract endpoint to its handler (http/bind.ts), with hooks of that route only. */
  route: <E extends EndpointDef>(def: E, handler: Handler<E>, hooks?: RouteHooks) => void;
}
