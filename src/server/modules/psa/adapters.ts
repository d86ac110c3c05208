import type { PsaProviderName } from '../../../contract/psa.js';
import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';

/** What a ticket is opened with. */
export interface TicketInput {
  title: string;
  description: string;
  severity: 'critical' | 'high' | 'medium' | 'low' | 'info';
}

/** A ticket as the provider holds it. `open` is false once the provider counts it solved, closed or cancelled. */
export interface TicketState {
  externalTicketId: string;
  externalTicketUrl: string | null;
  title: string;
  status: string;
  open: boolean;
}

/** The one interface every provider is reached through (02 §2.8). */
export interface PsaAdapter {
  readonly provider: PsaProviderName;
  /** One authenticated call to the provider's API; resolves with a message, throws PsaCallError. */
  testCredentials(): Promise<string>;
  createTicket(input: TicketInput): Promise<TicketState>;
  appendNote(externalTicketId: string, text: string): Promise<void>;
  /** The ticket now; null when the provider no longer has it (404). */
  getTicket(externalTicketId: string): Promise<TicketState | null>;
}

/** A provider call that did not succeed; `status` is the HTTP status when there was one. */
export class PsaCallError extends Error {
  override name = 'PsaCallError';
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** Credentials with a missing or unusable field; `fields` names them (05-wire-notes "Required credentials"). */
export class PsaCredentialsError extends Error {
  override name = 'PsaCredentialsError';
  constructor(
    readonly provider: PsaProviderName,
    readonly fields: string[],
  ) {
    super(`${provider} connection is missing required credential field(s): ${fields.join(', ')}`);
  }
}

/** A setting the provider needs to file a ticket is missing. */
export class PsaSettingsError extends Error {
  override name = 'PsaSettingsError';
}

/** The provider's call timeout: a ticket call waits at most this long. */
export const PSA_CALL_TIMEOUT_MS = 15_000;
const MAX_RESPONSE_BYTES = 1_048_576;

type Json = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const obj = (value: unknown): Json => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {});
const idOf = (value: unknown): string | undefined => (typeof value === 'number' || typeof value === 'string' ? String(value) : undefined);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Required credential fields of each provider (05-wire-notes); jira takes one of three sets. */
const REQUIRED: Record<PsaProviderName, string[][]> = {
  servicenow: [['baseUrl', 'username', 'password']],
  jira: [
    ['baseUrl', 'email', 'apiToken'],
    ['baseUrl', 'personalAccessToken'],
    ['baseUrl', 'username', 'password'],
  ],
  connectwise: [['baseUrl', 'companyId', 'publicKey', 'privateKey']],
  autotask: [['baseUrl', 'username', 'secret', 'integrationCode']],
  freshservice: [['baseUrl', 'apiKey']],
  zendesk: [['baseUrl', 'email', 'apiToken']],
};

/** The fields missing from the credentials (for jira: from the first set, when no set is complete). */
export function missingCredentials(provider: PsaProviderName, credentials: Json): string[] {
  const sets = REQUIRED[provider];
  if (sets.some((set) => set.every((f) => str(credentials[f]) !== undefined))) return [];
  return (sets[0] ?? []).filter((f) => str(credentials[f]) === undefined);
}

/** The placement setting each provider needs to open a ticket (docs/api-notes.md "PSA"). */
const REQUIRED_SETTINGS: Record<PsaProviderName, string[]> = {
  servicenow: [],
  jira: ['projectKey'],
  connectwise: ['boardId', 'companyIdentifier'],
  autotask: ['companyId', 'queueId'],
  freshservice: ['requesterEmail'],
  zendesk: [],
};

export function missingSettings(provider: PsaProviderName, settings: Json): string[] {
  return REQUIRED_SETTINGS[provider].filter((key) => settings[key] === undefined || settings[key] === null || settings[key] === '');
}

/** JSON over the outbound guard, against the provider's base URL, with the provider's authentication. */
class ProviderHttp {
  readonly baseUrl: string;
  constructor(
    private readonly outbound: OutboundClient,
    private readonly provider: PsaProviderName,
    baseUrl: string,
    private readonly auth: Record<string, string>,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** The parsed JSON answer; null for 404 when `allow404`. */
  async call(method: string, path: string, body?: unknown, allow404 = false): Promise<Json | null> {
    let res;
    try {
      res = await this.outbound.request(`${this.baseUrl}${path}`, {
        method,
        headers: { accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...this.auth },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        timeoutMs: PSA_CALL_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
    } catch (err) {
      if (err instanceof OutboundBlockedError) throw new PsaCallError(`credentials.baseUrl rejected: ${err.reason}`);
      throw new PsaCallError(`${this.provider} could not be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (res.status === 404 && allow404) return null;
    if (res.status === 401 || res.status === 403) throw new PsaCallError(`${this.provider} rejected the credentials (HTTP ${res.status})`, res.status);
    if (res.status < 200 || res.status >= 300) throw new PsaCallError(`${this.provider} answered HTTP ${res.status}: ${res.body.slice(0, 300)}`, res.status);
    if (res.body.trim() === '') return {};
    try {
      return obj(JSON.parse(res.body));
    } catch {
      throw new PsaCallError(`${this.provider} answered HTTP ${res.status} with a body that is not JSON`, res.status);
    }
  }

  /** `call` for requests that do not allow 404: never null. */
  async must(method: string, path: string, body?: unknown): Promise<Json> {
    return (await this.call(method, path, body)) ?? {};
  }
}

const need = (value: string | undefined, provider: PsaProviderName, what: string): string => {
  if (value === undefined) throw new PsaCallError(`${provider} answered without ${what}`);
  return value;
};

/** What every adapter holds: the provider's authenticated HTTP client and the organization's ticket settings. */
abstract class ProviderAdapter {
  abstract readonly provider: PsaProviderName;
  constructor(
    protected readonly http: ProviderHttp,
    protected readonly settings: Json,
  ) {}

  /** Credentials checked by one authenticated GET: a 2xx answer means the provider accepted them. */
  protected async verifiedBy(path: string): Promise<string> {
    await this.http.must('GET', path);
    return 'Credentials verified';
  }

  /** Throws PsaSettingsError naming the settings the provider needs to open a ticket and the organization lacks. */
  protected requireTicketSettings(): void {
    const missing = missingSettings(this.provider, this.settings);
    if (missing.length) throw new PsaSettingsError(`${this.provider} needs settings.${missing.join(', settings.')} to open tickets`);
  }
}

/** ServiceNow Table API (`/api/now/table/incident`), basic authentication. */
class ServiceNowAdapter extends ProviderAdapter implements PsaAdapter {
  readonly provider = 'servicenow' as const;
  private static readonly STATES: Record<string, string> = { '1': 'New', '2': 'In Progress', '3': 'On Hold', '6': 'Resolved', '7': 'Closed', '8': 'Canceled' };
  testCredentials() {
    return this.verifiedBy('/api/now/table/incident?sysparm_limit=1&sysparm_fields=sys_id');
  }
  private state(record: Json): TicketState {
    const sysId = need(str(record.sys_id), this.provider, 'sys_id');
    const code = idOf(record.state) ?? '1';
    return {
      externalTicketId: sysId,
      externalTicketUrl: `${this.http.baseUrl}/nav_to.do?uri=incident.do?sys_id=${encodeURIComponent(sysId)}`,
      title: str(record.short_description) ?? str(record.number) ?? sysId,
      status: ServiceNowAdapter.STATES[code] ?? code,
      open: !['6', '7', '8'].includes(code),
    };
  }
  async createTicket(input: TicketInput) {
    const level = input.severity === 'critical' ? '1' : input.severity === 'high' ? '2' : '3';
    const res = await this.http.must('POST', '/api/now/table/incident', { short_description: input.title, description: input.description, urgency: level, impact: level });
    return this.state(obj(res.result));
  }
  async appendNote(id: string, text: string) {
    await this.http.must('PATCH', `/api/now/table/incident/${encodeURIComponent(id)}`, { work_notes: text });
  }
  async getTicket(id: string) {
    const res = await this.http.call('GET', `/api/now/table/incident/${encodeURIComponent(id)}`, undefined, true);
    return res ? this.state(obj(res.result)) : null;
  }
}

/** Atlassian Document Format: one paragraph per line. */
const adf = (text: string) => ({
  type: 'doc',
  version: 1,
  content: text.split('\n').map((line) => ({ type: 'paragraph', content: line ? [{ type: 'text', text: line }] : [] })),
});

/** Jira REST v3 (`/rest/api/3/issue`, `/myself`): email + API token basic, a personal access token as bearer, or
 * username + password basic. */
class JiraAdapter extends ProviderAdapter implements PsaAdapter {
  readonly provider = 'jira' as const;
  async testCredentials() {
    const me = await this.http.must('GET', '/rest/api/3/myself');
    const who = str(me.displayName) ?? str(me.emailAddress);
    return who ? `Credentials verified (signed in as ${who})` : 'Credentials verified';
  }
  private state(key: string, issue: Json): TicketState {
    const fields = obj(issue.fields);
    const status = obj(fields.status);
    return {
      externalTicketId: key,
      externalTicketUrl: `${this.http.baseUrl}/browse/${encodeURIComponent(key)}`,
      title: str(fields.summary) ?? key,
      status: str(status.name) ?? 'Open',
      open: str(obj(status.statusCategory).key) !== 'done',
    };
  }
  async createTicket(input: TicketInput) {
    const projectKey = str(this.settings.projectKey);
    if (!projectKey) throw new PsaSettingsError('jira needs settings.projectKey to open tickets');
    const res = await this.http.must('POST', '/rest/api/3/issue', {
      fields: {
        project: { key: projectKey },
        summary: input.title.slice(0, 255),
        description: adf(input.description),
        issuetype: { name: str(this.settings.issueType) ?? 'Task' },
        labels: ['svc-alert', `severity-${input.severity}`],
      },
    });
    const key = need(str(res.key), this.provider, 'an issue key');
    return { externalTicketId: key, externalTicketUrl: `${this.http.baseUrl}/browse/${encodeURIComponent(key)}`, title: input.title, status: 'Open', open: true };
  }
  async appendNote(key: string, text: string) {
    await this.http.must('POST', `/rest/api/3/issue/${encodeURIComponent(key)}/comment`, { body: adf(text) });
  }
  async getTicket(key: string) {
    const res = await this.http.call('GET', `/rest/api/3/issue/${encodeURIComponent(key)}?fields=summary,status`, undefined, true);
    return res ? this.state(key, res) : null;
  }
}

const CW_API = '/v4_6_release/apis/3.0';

/** ConnectWise Manage (`/v4_6_release/apis/3.0/service/tickets`), basic `companyId+publicKey:privateKey`, the
 * clientId header when configured. */
class ConnectWiseAdapter extends ProviderAdapter implements PsaAdapter {
  readonly provider = 'connectwise' as const;
  testCredentials() {
    return this.verifiedBy(`${CW_API}/system/info`);
  }
  private state(ticket: Json): TicketState {
    const id = need(idOf(ticket.id), this.provider, 'a ticket id');
    const status = obj(ticket.status);
    return {
      externalTicketId: id,
      externalTicketUrl: `${this.http.baseUrl}/v4_6_release/services/system_io/Service/fv_sr100_request.rails?service_recid=${id}`,
      title: str(ticket.summary) ?? `Ticket ${id}`,
      status: str(status.name) ?? 'New',
      open: ticket.closedFlag !== true,
    };
  }
  async createTicket(input: TicketInput) {
    this.requireTicketSettings();
    const res = await this.http.must('POST', `${CW_API}/service/tickets`, {
      summary: input.title.slice(0, 100),
      initialDescription: input.description,
      board: { id: this.settings.boardId },
      company: { identifier: this.settings.companyIdentifier },
    });
    return this.state(res);
  }
  async appendNote(id: string, text: string) {
    await this.http.must('POST', `${CW_API}/service/tickets/${encodeURIComponent(id)}/notes`, { text, internalAnalysisFlag: true });
  }
  async getTicket(id: string) {
    const res = await this.http.call('GET', `${CW_API}/service/tickets/${encodeURIComponent(id)}`, undefined, true);
    return res ? this.state(res) : null;
  }
}

const AT_API = '/ATServicesRest/V1.0';

/** Autotask REST (`/ATServicesRest/V1.0/Tickets`), headers UserName, Secret and ApiIntegrationCode. */
class AutotaskAdapter extends ProviderAdapter implements PsaAdapter {
  readonly provider = 'autotask' as const;
  private static readonly STATUSES: Record<string, string> = { '1': 'New', '5': 'Complete', '7': 'Waiting Customer', '8': 'In Progress' };
  /** Autotask's priority picklist: 1 High, 2 Medium, 3 Low, 4 Critical. */
  private static readonly PRIORITY = { critical: 4, high: 1, medium: 2, low: 3, info: 3 } as const;
  testCredentials() {
    return this.verifiedBy(`${AT_API}/Tickets/entityInformation`);
  }
  async createTicket(input: TicketInput) {
    this.requireTicketSettings();
    const res = await this.http.must('POST', `${AT_API}/Tickets`, {
      companyID: this.settings.companyId,
      queueID: this.settings.queueId,
      title: input.title.slice(0, 255),
      description: input.description.slice(0, 8000),
      status: 1,
      priority: AutotaskAdapter.PRIORITY[input.severity],
    });
    const id = need(idOf(res.itemId), this.provider, 'an itemId');
    return { externalTicketId: id, externalTicketUrl: null, title: input.title, status: 'New', open: true };
  }
  async appendNote(id: string, text: string) {
    await this.http.must('POST', `${AT_API}/Tickets/${encodeURIComponent(id)}/Notes`, { title: 'Svc alert update', description: text.slice(0, 32000), noteType: 1, publish: 1 });
  }
  async getTicket(id: string) {
    const res = await this.http.call('GET', `${AT_API}/Tickets/${encodeURIComponent(id)}`, undefined, true);
    if (!res || res.item === null) return null;
    const item = obj(res.item);
    const code = idOf(item.status) ?? '1';
    return {
      externalTicketId: id,
      externalTicketUrl: null,
      title: str(item.title) ?? `Ticket ${id}`,
      status: AutotaskAdapter.STATUSES[code] ?? `Status ${code}`,
      open: code !== '5',
    };
  }
}

/** Freshservice (`/api/v2/tickets`), basic `apiKey:X`. */
class FreshserviceAdapter extends ProviderAdapter implements PsaAdapter {
  readonly provider = 'freshservice' as const;
  private static readonly STATUSES: Record<string, string> = { '2': 'Open', '3': 'Pending', '4': 'Resolved', '5': 'Closed' };
  private static readonly PRIORITY = { critical: 4, high: 3, medium: 2, low: 1, info: 1 } as const;
  testCredentials() {
    return this.verifiedBy('/api/v2/tickets?per_page=1');
  }
  private state(ticket: Json): TicketState {
    const id = need(idOf(ticket.id), this.provider, 'a ticket id');
    const code = idOf(ticket.status) ?? '2';
    return {
      externalTicketId: id,
      externalTicketUrl: `${this.http.baseUrl}/helpdesk/tickets/${id}`,
      title: str(ticket.subject) ?? `Ticket ${id}`,
      status: FreshserviceAdapter.STATUSES[code] ?? `Status ${code}`,
      open: code !== '4' && code !== '5',
    };
  }
  async createTicket(input: TicketInput) {
    const email = str(this.settings.requesterEmail);
    if (!email) throw new PsaSettingsError('freshservice needs settings.requesterEmail to open tickets');
    const res = await this.http.must('POST', '/api/v2/tickets', {
      subject: input.title.slice(0, 255),
      description: input.description,
      email,
      priority: FreshserviceAdapter.PRIORITY[input.severity],
      status: 2,
    });
    return this.state(obj(res.ticket));
  }
  async appendNote(id: string, text: string) {
    await this.http.must('POST', `/api/v2/tickets/${encodeURIComponent(id)}/notes`, { body: text, private: true });
  }
  async getTicket(id: string) {
    const res = await this.http.call('GET', `/api/v2/tickets/${encodeURIComponent(id)}`, undefined, true);
    return res ? this.state(obj(res.ticket)) : null;
  }
}

/** Zendesk (`/api/v2/tickets.json`), basic `email/token:apiToken`. */
class ZendeskAdapter extends ProviderAdapter implements PsaAdapter {
  readonly provider = 'zendesk' as const;
  private static readonly PRIORITY = { critical: 'urgent', high: 'high', medium: 'normal', low: 'low', info: 'low' } as const;
  async testCredentials() {
    const res = await this.http.must('GET', '/api/v2/users/me.json');
    // Zendesk answers an anonymous user (id null) rather than 401 on some accounts.
    if (idOf(obj(res.user).id) === undefined) throw new PsaCallError('zendesk rejected the credentials (anonymous user)');
    return 'Credentials verified';
  }
  private state(ticket: Json): TicketState {
    const id = need(idOf(ticket.id), this.provider, 'a ticket id');
    const status = str(ticket.status) ?? 'new';
    return {
      externalTicketId: id,
      externalTicketUrl: `${this.http.baseUrl}/agent/tickets/${id}`,
      title: str(ticket.subject) ?? `Ticket ${id}`,
      status,
      open: status !== 'solved' && status !== 'closed',
    };
  }
  async createTicket(input: TicketInput) {
    const res = await this.http.must('POST', '/api/v2/tickets.json', {
      ticket: { subject: input.title.slice(0, 255), comment: { body: input.description }, priority: ZendeskAdapter.PRIORITY[input.severity] },
    });
    return this.state(obj(res.ticket));
  }
  async appendNote(id: string, text: string) {
    await this.http.must('PUT', `/api/v2/tickets/${encodeURIComponent(id)}.json`, { ticket: { comment: { body: text, public: false } } });
  }
  async getTicket(id: string) {
    const res = await this.http.call('GET', `/api/v2/tickets/${encodeURIComponent(id)}.json`, undefined, true);
    return res ? this.state(obj(res.ticket)) : null;
  }
}

/** The authentication headers of each provider from its credentials (05-wire-notes; docs/api-notes.md "PSA"). */
function authHeaders(provider: PsaProviderName, c: Json): Record<string, string> {
  const s = (key: string) => str(c[key]) ?? '';
  switch (provider) {
    case 'servicenow':
      return { authorization: basic(s('username'), s('password')) };
    case 'jira':
      if (str(c.email) && str(c.apiToken)) return { authorization: basic(s('email'), s('apiToken')) };
      if (str(c.personalAccessToken)) return { authorization: `Bearer ${s('personalAccessToken')}` };
      return { authorization: basic(s('username'), s('password')) };
    case 'connectwise':
      return { authorization: basic(`${s('companyId')}+${s('publicKey')}`, s('privateKey')), ...(str(c.clientId) ? { clientId: s('clientId') } : {}) };
    case 'autotask':
      return { UserName: s('username'), Secret: s('secret'), ApiIntegrationCode: s('integrationCode') };
    case 'freshservice':
      return { authorization: basic(s('apiKey'), 'X') };
    case 'zendesk':
      return { authorization: basic(`${s('email')}/token`, s('apiToken')) };
  }
}

/** The adapter of a provider over its credentials; PsaCredentialsError when a required field is missing. */
export function createAdapter(provider: PsaProviderName, credentials: Json, settings: Json, outbound: OutboundClient): PsaAdapter {
  const missing = missingCredentials(provider, credentials);
  if (missing.length) throw new PsaCredentialsError(provider, missing);
  const http = new ProviderHttp(outbound, provider, str(credentials.baseUrl) ?? '', authHeaders(provider, credentials));
  switch (provider) {
    case 'servicenow':
      return new ServiceNowAdapter(http, settings);
    case 'jira':
      return new JiraAdapter(http, settings);
    case 'connectwise':
      return new ConnectWiseAdapter(http, settings);
    case 'autotask':
      return new AutotaskAdapter(http, settings);
    case 'freshservice':
      return new FreshserviceAdapter(http, settings);
    case 'zendesk':
      return new ZendeskAdapter(http, settings);
  }
}
