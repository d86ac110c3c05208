import { and, eq, inArray, sql } from 'drizzle-orm';
import { CHAT_PROVIDERS, type ChatProvider } from '../../../contract/integrations.js';
import { systemContext, type RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { preparedQueries, rowById } from '../../db/prepared.js';
import { integrationSettings, type IntegrationKind } from '../../db/schema/index.js';
import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';
import { badRequest, notFound } from '../../errors.js';
import { enqueueJob, type JobWorker } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import { resolveWriteOrg } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';
import { bodyOrgId, checkFields, maskConfig, parseConfigBody, unmask, wantsTest, type Config } from './config.js';
import { authorizationOf, chatMessage, probe, type ProbeResult } from './probe.js';

type Row = typeof integrationSettings.$inferSelect;

/** An organization's settings of one kind, and of every chat provider; the settings of one kind stored (those of
 * the organization and kind replaced: `config` as its JSON text, `configEnc`, `updatedBy`, `updatedAt`; the insert
 * names every column, as drizzle's insert did); the outcome of a test, and a chat test queued, on the settings of
 * `id`. Prepared once per database. */
const settingsQueries = preparedQueries((db) => {
  const ofOrg = eq(integrationSettings.orgId, sql.placeholder('orgId'));
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const ofId = eq(integrationSettings.id, sql.placeholder('id'));
  return {
    ofKind: db.select().from(integrationSettings).where(and(ofOrg, eq(integrationSettings.kind, sql.placeholder('kind')))).prepare(),
    chat: db.select().from(integrationSettings).where(and(ofOrg, inArray(integrationSettings.kind, [...CHAT_PROVIDERS]))).prepare(),
    store: db
      .insert(integrationSettings)
      .values({
        id: value('id'),
        orgId: value('orgId'),
        kind: value('kind'),
        config: value('config'),
        configEnc: value('configEnc'),
        lastTestedAt: null,
        lastTestStatus: null,
        lastTestError: null,
        updatedBy: value('updatedBy'),
        createdAt: value('createdAt'),
        updatedAt: value('updatedAt'),
      })
      .onConflictDoUpdate({
        target: [integrationSettings.orgId, integrationSettings.kind],
        set: { config: value('config'), configEnc: value('configEnc'), updatedBy: value('updatedBy'), updatedAt: value('updatedAt') },
      })
      .returning()
      .prepare(),
    tested: db
      .update(integrationSettings)
      .set({ lastTestedAt: value('lastTestedAt'), lastTestStatus: value('lastTestStatus'), lastTestError: value('lastTestError') })
      .where(ofId)
      .prepare(),
    testQueued: db.update(integrationSettings).set({ lastTestStatus: 'queued', lastTestError: null }).where(ofId).prepare(),
  };
});

const CHAT_TEST_JOB = 'integrations.chat-test';

/** How each chat provider is named in messages. */
const CHAT_LABELS: Record<ChatProvider, string> = { slack: 'Slack', teams: 'Microsoft Teams', discord: 'Discord' };

/** 02 §2.8 PSA providers by wire value (05-wire-notes 2.8). */
const PSA_PROVIDERS = ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'];

const CHAT_FIELDS = { webhookUrl: 'url', channel: 'string', username: 'string', notifyOn: 'string[]' } as const;
const MONITORING_FIELDS = { endpoint: 'url', apiKey: 'string', metricsEnabled: 'boolean', forwardEvents: 'boolean' } as const;
const TICKETING_FIELDS = { provider: 'string', apiUrl: 'url', apiKey: 'string', projectKey: 'string', autoCreate: 'boolean' } as const;
const PSA_FIELDS = { provider: 'string', baseUrl: 'url', apiUrl: 'url', url: 'url', credentials: 'object' } as const;
const URL_FIELDS = ['webhookUrl', 'endpoint', 'apiUrl', 'baseUrl', 'url'];

export interface IntegrationTestResult {
  success: boolean;
  message: string;
}

/**
 * 02 §4.4 integrations: the chat providers, monitoring, ticketing and the legacy PSA settings of an organization.
 * Configurations live in the database (one row per organization and kind), sealed whole with SecretBox; what is
 * read is a copy with every secret masked. Every `test` is a real request through the outbound guard.
 */
export class IntegrationsService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly tenancy: TenancyService,
    private readonly outbound: OutboundClient,
  ) {}

  /** The background half of a chat `test` (the API answers "queued" at once, 05-wire-notes 4.4). */
  register(worker: JobWorker): void {
    worker.handle(CHAT_TEST_JOB, (payload) => this.runChatTest(String(payload.settingsId)));
  }

  // ---- organization context (02 §4.4, 05-wire-notes "Org resolution") ----

  private orgFor(ctx: RequestContext, queryOrgId: string | undefined, body?: unknown): string {
    const fromBody = bodyOrgId(body);
    if (queryOrgId && fromBody && queryOrgId !== fromBody) throw badRequest('orgId in the query and in the body differ', 'ORG_ID_MISMATCH');
    const orgId = queryOrgId ?? fromBody;
    return resolveWriteOrg(this.db, ctx.caller, orgId).id;
  }

  // ---- storage ----

  private row(orgId: string, kind: IntegrationKind): Row | undefined {
    return settingsQueries(this.db).ofKind.get({ orgId, kind });
  }

  private open(row: Row | undefined): Config | undefined {
    return row ? (JSON.parse(this.box.open(row.configEnc)) as Config) : undefined;
  }

  /** Checks every URL field through the outbound guard (HTTPS, public, resolvable): 400 `<field> rejected: …`. */
  private async checkUrls(config: Config): Promise<void> {
    for (const field of URL_FIELDS) {
      const value = config[field];
      if (typeof value !== 'string') continue;
      try {
        await this.outbound.checkUrl(value, { httpsOnly: true });
      } catch (err) {
        if (err instanceof OutboundBlockedError) throw badRequest(`${field} rejected: ${err.reason}`, 'UNSAFE_URL');
        throw err;
      }
    }
  }

  /** Replaces the configuration of one kind (inside a transaction; `then` runs in the same one). */
  private store(ctx: RequestContext, orgId: string, kind: IntegrationKind, config: Config, then?: (row: Row) => void): Row {
    const now = new Date().toISOString();
    const values = { config: JSON.stringify(maskConfig(config)), configEnc: this.box.seal(JSON.stringify(config)), updatedBy: ctx.caller.userId, updatedAt: now };
    return this.db.$client.transaction(() => {
      const row = settingsQueries(this.db).store.get({ id: newId(), orgId, kind, ...values, createdAt: new Date().toISOString() });
      if (!row) throw new Error(`integration settings of ${kind} not stored`);
      recordAudit(this.db, ctx, {
        action: 'integration.update',
        resourceType: 'integration',
        resourceId: row.id,
        resourceName: kind,
        orgId,
        details: { kind, fields: Object.keys(config) },
      });
      then?.(row);
      return row;
    })();
  }

  /** Records a test's outcome: the audit entry, and the settings' last test fields. */
  private audited(ctx: RequestContext, orgId: string, kind: IntegrationKind, row: Row | undefined, result: IntegrationTestResult): IntegrationTestResult {
    this.db.$client.transaction(() => this.recordTest(ctx, orgId, kind, row, result))();
    return result;
  }

  private recordTest(ctx: RequestContext, orgId: string, kind: IntegrationKind, row: Row | undefined, result: IntegrationTestResult): void {
    recordAudit(this.db, ctx, {
      action: 'integration.test',
      resourceType: 'integration',
      resourceId: row?.id ?? null,
      resourceName: kind,
      orgId,
      details: { kind, success: result.success, message: result.message },
    });
    if (row) {
      settingsQueries(this.db).tested.run({
        id: row.id,
        lastTestedAt: new Date().toISOString(),
        lastTestStatus: result.success ? 'succeeded' : 'failed',
        lastTestError: result.success ? null : result.message,
      });
    }
  }

  /** The configuration a test uses: the stored one with the body's fields over it (secrets sent back masked
   * keep the stored values), checked like a save. */
  private async testConfig(orgId: string, kind: IntegrationKind, body: unknown, fields: Parameters<typeof checkFields>[1], missing: string) {
    const row = this.row(orgId, kind);
    const stored = this.open(row);
    const given = body === undefined ? {} : parseConfigBody(body);
    if (!stored && Object.keys(given).length === 0) throw notFound(missing, 'SETTINGS_NOT_FOUND');
    const config = { ...(stored ?? {}), ...unmask(given, stored) };
    checkFields(config, fields);
    await this.checkUrls(config);
    return { row, config };
  }

  /** Saves the body as the settings of `kind` (secrets sent back masked keep the stored values), checked
   * field by field and URL by URL; answers the stored configuration. */
  private async saveChecked(ctx: RequestContext, queryOrgId: string | undefined, body: unknown, kind: IntegrationKind, fields: Parameters<typeof checkFields>[1]) {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    const config = unmask(parseConfigBody(body), this.open(this.row(orgId, kind)));
    checkFields(config, fields);
    await this.checkUrls(config);
    return this.store(ctx, orgId, kind, config).config;
  }

  // ---- communication (chat providers) ----

  private presentChat(row: Row): Config {
    return { ...row.config, lastTestedAt: row.lastTestedAt, lastTestStatus: row.lastTestStatus, lastTestError: row.lastTestError, updatedAt: row.updatedAt };
  }

  private chatSettings(orgId: string): Record<string, Config> {
    const rows = settingsQueries(this.db).chat.all({ orgId });
    return Object.fromEntries(rows.map((r) => [r.kind, this.presentChat(r)]));
  }

  communication(ctx: RequestContext, queryOrgId: string | undefined): { data: Record<string, Config> } {
    const data = this.chatSettings(this.orgFor(ctx, queryOrgId));
    if (Object.keys(data).length === 0) throw notFound('Communication settings not found', 'SETTINGS_NOT_FOUND');
    return { data };
  }

  /** POST /integrations/{chat}: saves the provider's settings (a body of only `test: true` keeps them), then with
   * `test: true` queues a test notification to its webhook URL. */
  async saveChat(ctx: RequestContext, provider: ChatProvider, queryOrgId: string | undefined, body: unknown) {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    const given = parseConfigBody(body);
    const test = wantsTest(body);
    const current = this.row(orgId, provider);
    if (Object.keys(given).length === 0 && test) {
      if (!current) throw notFound('Communication settings not found', 'SETTINGS_NOT_FOUND');
      this.db.$client.transaction(() => this.queueChatTest(current))();
      return { success: true as const, message: `${CHAT_LABELS[provider]} test notification queued.` };
    }
    const config = unmask(given, this.open(current));
    checkFields(config, CHAT_FIELDS);
    if (typeof config.webhookUrl !== 'string') throw badRequest('webhookUrl is required', 'VALIDATION_ERROR');
    await this.checkUrls(config);
    this.store(ctx, orgId, provider, config, (row) => {
      if (test) this.queueChatTest(row);
    });
    if (test) return { success: true as const, message: `${CHAT_LABELS[provider]} test notification queued.` };
    return { success: true as const, data: this.chatSettings(orgId) };
  }

  private queueChatTest(row: Row): void {
    settingsQueries(this.db).testQueued.run({ id: row.id });
    enqueueJob(this.db, CHAT_TEST_JOB, { settingsId: row.id }, { maxAttempts: 1 });
  }

  /** The queued chat test: the provider's message POSTed to the stored webhook URL; the outcome is kept on the
   * settings (lastTestStatus, lastTestError) and in the audit log. */
  async runChatTest(settingsId: string): Promise<void> {
    const row = rowById(this.db, integrationSettings, settingsId);
    const config = this.open(row);
    if (!row || !config || typeof config.webhookUrl !== 'string') return;
    const label = CHAT_LABELS[row.kind as ChatProvider];
    const text = `Svc test notification: ${label} is connected, and alerts of this organization can be sent here.`;
    const outcome = await probe(this.outbound, { url: config.webhookUrl, method: 'POST', body: chatMessage(row.kind, config, text) });
    const message = outcome.success ? `${label} test notification delivered.` : `${label} test notification failed: ${outcome.message}`;
    this.audited(systemContext(), row.orgId, row.kind, row, { success: outcome.success, message });
  }

  // ---- monitoring ----

  getMonitoring(ctx: RequestContext, queryOrgId: string | undefined): Config {
    return this.row(this.orgFor(ctx, queryOrgId), 'monitoring')?.config ?? {};
  }

  async putMonitoring(ctx: RequestContext, queryOrgId: string | undefined, body: unknown) {
    return { success: true as const, data: await this.saveChecked(ctx, queryOrgId, body, 'monitoring', MONITORING_FIELDS) };
  }

  /** POSTs a test event to the monitoring endpoint with the API key as a bearer token. */
  async testMonitoring(ctx: RequestContext, queryOrgId: string | undefined, body: unknown): Promise<IntegrationTestResult> {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    const { row, config } = await this.testConfig(orgId, 'monitoring', body, MONITORING_FIELDS, 'Monitoring settings not found');
    if (typeof config.endpoint !== 'string') throw badRequest('endpoint is required to test the monitoring settings', 'VALIDATION_ERROR');
    const outcome = await probe(this.outbound, {
      url: config.endpoint,
      method: 'POST',
      headers: authorizationOf({ apiKey: config.apiKey }),
      body: { type: 'integration.test', orgId, timestamp: new Date().toISOString(), message: 'Test event from Svc' },
    });
    return this.audited(ctx, orgId, 'monitoring', row, result(outcome, 'Connection successful.'));
  }

  // ---- ticketing ----

  getTicketing(ctx: RequestContext, queryOrgId: string | undefined): Config {
    return this.row(this.orgFor(ctx, queryOrgId), 'ticketing')?.config ?? {};
  }

  async saveTicketing(ctx: RequestContext, queryOrgId: string | undefined, body: unknown) {
    const data = await this.saveChecked(ctx, queryOrgId, body, 'ticketing', TICKETING_FIELDS);
    return { success: true as const, message: 'Ticketing settings saved.', data };
  }

  /** GETs the ticketing API URL with the API key as a bearer token: 2xx means the credentials were accepted. */
  async testTicketing(ctx: RequestContext, queryOrgId: string | undefined, body: unknown): Promise<IntegrationTestResult> {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    const { row, config } = await this.testConfig(orgId, 'ticketing', body, TICKETING_FIELDS, 'Ticketing settings not found');
    if (typeof config.apiUrl !== 'string') throw badRequest('apiUrl is required to test the ticketing settings', 'VALIDATION_ERROR');
    const outcome = await probe(this.outbound, { url: config.apiUrl, method: 'GET', headers: authorizationOf({ apiKey: config.apiKey }) });
    return this.audited(ctx, orgId, 'ticketing', row, result(outcome, 'Connection successful. Credentials validated.'));
  }

  // ---- legacy PSA settings (02 §2.8: use /psa) ----

  getPsa(ctx: RequestContext, queryOrgId: string | undefined) {
    const row = this.row(this.orgFor(ctx, queryOrgId), 'psa');
    if (!row) throw notFound('PSA settings not found', 'SETTINGS_NOT_FOUND');
    return { success: true as const, data: row.config };
  }

  private async storePsa(ctx: RequestContext, orgId: string, config: Config) {
    checkFields(config, PSA_FIELDS);
    checkPsaProvider(config);
    await this.checkUrls(config);
    return { success: true as const, data: this.store(ctx, orgId, 'psa', config).config };
  }

  /** POST: replaces the legacy settings. */
  async savePsa(ctx: RequestContext, queryOrgId: string | undefined, body: unknown) {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    return this.storePsa(ctx, orgId, unmask(parseConfigBody(body), this.open(this.row(orgId, 'psa'))));
  }

  /** PUT: changes the given fields of the stored legacy settings (404 when there are none). */
  async updatePsa(ctx: RequestContext, queryOrgId: string | undefined, body: unknown) {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    const stored = this.open(this.row(orgId, 'psa'));
    if (!stored) throw notFound('PSA settings not found', 'SETTINGS_NOT_FOUND');
    const given = parseConfigBody(body);
    if (Object.keys(given).length === 0) throw badRequest('No updates provided');
    return this.storePsa(ctx, orgId, { ...stored, ...unmask(given, stored) });
  }

  /** GETs the PSA base URL with its credentials (Basic or Bearer, probe.ts): 2xx means they were accepted. */
  async testPsa(ctx: RequestContext, queryOrgId: string | undefined, body: unknown): Promise<IntegrationTestResult> {
    const orgId = this.orgFor(ctx, queryOrgId, body);
    const { row, config } = await this.testConfig(orgId, 'psa', body, PSA_FIELDS, 'PSA settings not found');
    checkPsaProvider(config);
    const url = [config.baseUrl, config.apiUrl, config.url].find((u): u is string => typeof u === 'string');
    if (!url) throw badRequest('baseUrl is required to test the PSA settings', 'VALIDATION_ERROR');
    const outcome = await probe(this.outbound, { url, method: 'GET', headers: authorizationOf(config) });
    return this.audited(ctx, orgId, 'psa', row, result(outcome, `${String(config.provider)} connection successful.`));
  }
}

function checkPsaProvider(config: Config): void {
  if (typeof config.provider !== 'string') throw badRequest('provider is required', 'VALIDATION_ERROR');
  if (!PSA_PROVIDERS.includes(config.provider)) throw badRequest(`provider must be one of ${PSA_PROVIDERS.join(', ')}`, 'VALIDATION_ERROR');
}

/** A probe as the API answers it: the wire notes' success message, or why it failed. */
function result(outcome: ProbeResult, okMessage: string): IntegrationTestResult {
  if (outcome.success) return { success: true, message: okMessage };
  const rejected = outcome.status === 401 || outcome.status === 403;
  return { success: false, message: `${rejected ? 'Credentials rejected' : 'Connection failed'}: ${outcome.message}` };
}
