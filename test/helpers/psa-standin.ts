import type http from 'node:http';
import { startReceiver, type ReceivedRequest, type Receiver } from './https-receiver.js';

/**
 * One loopback HTTPS stand-in for the six PSA providers of 02 §2.8, parameterised per provider: it speaks, for
 * what the adapters use, each provider's documented API (paths, authentication header, request and response
 * shapes), checks the authentication header on every request (401 otherwise), refuses a create without the
 * fields the provider requires (400), and answers 501 to anything else.
 */

export type StandInProvider = 'servicenow' | 'jira' | 'connectwise' | 'autotask' | 'freshservice' | 'zendesk';

export interface StandInTicket {
  id: string;
  title: string;
  description: string;
  /** What the create asked for (the provider's own body). */
  created: Record<string, unknown>;
  closed: boolean;
  notes: string[];
}

/** Valid credentials per provider, without baseUrl (the stand-in adds its own). */
export const STANDIN_CREDENTIALS: Record<StandInProvider, Record<string, string>> = {
  servicenow: { username: 'svc.integration', password: 'sn-Passw0rd' },
  jira: { email: 'bot@example.com', apiToken: 'jira-api-token-1' },
  connectwise: { companyId: 'acme', publicKey: 'pubKey1', privateKey: 'privKey1', clientId: 'client-uuid-1' },
  autotask: { username: 'api@acme.example', secret: 'at-secret-1', integrationCode: 'INTCODE1' },
  freshservice: { apiKey: 'fs-api-key-1' },
  zendesk: { email: 'agent@example.com', apiToken: 'zd-token-1' },
};

/** Settings with the placement each provider needs to open a ticket. */
export const STANDIN_SETTINGS: Record<StandInProvider, Record<string, unknown>> = {
  servicenow: {},
  jira: { projectKey: 'OPS' },
  connectwise: { boardId: 7, companyIdentifier: 'AcmeCorp' },
  autotask: { companyId: 0, queueId: 29682833 },
  freshservice: { requesterEmail: 'noc@example.com' },
  zendesk: {},
};

type Body = Record<string, unknown>;
type Answer = [number, unknown];
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const o = (v: unknown): Body => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Body) : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');
/** The text of an Atlassian Document Format document. */
const adfText = (doc: unknown): string =>
  (o(doc).content as unknown[] | undefined)?.map((p) => ((o(p).content as unknown[] | undefined) ?? []).map((t) => s(o(t).text)).join('')).join('\n') ?? '';

interface Route {
  method: string;
  path: RegExp;
  handle(match: RegExpMatchArray, body: Body, req: ReceivedRequest): Answer;
}

interface ProviderSpec {
  /** Whether the request carries the provider's authentication for the valid credentials. */
  authorized(headers: http.IncomingHttpHeaders): boolean;
  routes: Route[];
}

export interface PsaStandIn {
  provider: StandInProvider;
  url: string;
  /** Valid credentials including baseUrl. */
  credentials: Record<string, string>;
  tickets: Map<string, StandInTicket>;
  received: ReceivedRequest[];
  /** Closes a ticket on the provider's side (solved, done, complete…). */
  closeTicket(id: string): void;
  close(): Promise<void>;
}

export async function startPsaStandIn(provider: StandInProvider): Promise<PsaStandIn> {
  const tickets = new Map<string, StandInTicket>();
  let next = 1;
  const open = (id: string, title: string, description: string, created: Body): StandInTicket => {
    const ticket = { id, title, description, created, closed: false, notes: [] };
    tickets.set(id, ticket);
    return ticket;
  };
  const known = (id: string | undefined, then: (t: StandInTicket) => Answer): Answer => {
    const ticket = id === undefined ? undefined : tickets.get(decodeURIComponent(id));
    return ticket ? then(ticket) : [404, { error: 'Not found' }];
  };
  const missing = (body: Body, fields: string[]) => fields.filter((f) => f.split('.').reduce<unknown>((v, k) => o(v)[k], body) === undefined);
  const refuse = (fields: string[]): Answer => [400, { errors: fields.map((f) => `${f} is required`) }];
  const c = STANDIN_CREDENTIALS[provider];

  const specs: Record<StandInProvider, () => ProviderSpec> = {
    servicenow: () => {
      const rec = (t: StandInTicket) => ({ sys_id: t.id, number: `INC${t.id.slice(0, 7)}`, short_description: t.title, state: t.closed ? '7' : '1' });
      return {
        authorized: (h) => h.authorization === basic(c.username ?? '', c.password ?? ''),
        routes: [
          { method: 'GET', path: /^\/api\/now\/table\/incident\?sysparm_limit=1/, handle: () => [200, { result: [] }] },
          {
            method: 'POST',
            path: /^\/api\/now\/table\/incident$/,
            handle: (_m, b) => {
              const gaps = missing(b, ['short_description']);
              if (gaps.length) return refuse(gaps);
              return [201, { result: rec(open(`${(next++).toString(16).padStart(32, 'a')}`, s(b.short_description), s(b.description), b)) }];
            },
          },
          { method: 'PATCH', path: /^\/api\/now\/table\/incident\/([^/?]+)$/, handle: (m, b) => known(m[1], (t) => (t.notes.push(s(b.work_notes)), [200, { result: rec(t) }])) },
          { method: 'GET', path: /^\/api\/now\/table\/incident\/([^/?]+)$/, handle: (m) => known(m[1], (t) => [200, { result: rec(t) }]) },
        ],
      };
    },
    jira: () => {
      const issue = (t: StandInTicket) => ({
        key: t.id,
        fields: { summary: t.title, status: t.closed ? { name: 'Done', statusCategory: { key: 'done' } } : { name: 'To Do', statusCategory: { key: 'new' } } },
      });
      return {
        authorized: (h) => h.authorization === basic(c.email ?? '', c.apiToken ?? ''),
        routes: [
          { method: 'GET', path: /^\/rest\/api\/3\/myself$/, handle: () => [200, { accountId: '5b10ac8d82e05b22cc7d4ef5', displayName: 'Svc Bot', emailAddress: c.email }] },
          {
            method: 'POST',
            path: /^\/rest\/api\/3\/issue$/,
            handle: (_m, b) => {
              const gaps = missing(b, ['fields.project.key', 'fields.summary', 'fields.issuetype.name']);
              if (gaps.length) return refuse(gaps);
              const f = o(b.fields);
              const key = `${s(o(f.project).key)}-${next++}`;
              open(key, s(f.summary), adfText(f.description), b);
              return [201, { id: String(10_000 + next), key, self: `/rest/api/3/issue/${key}` }];
            },
          },
          { method: 'POST', path: /^\/rest\/api\/3\/issue\/([^/?]+)\/comment$/, handle: (m, b) => known(m[1], (t) => (t.notes.push(adfText(b.body)), [201, { id: String(next++) }])) },
          { method: 'GET', path: /^\/rest\/api\/3\/issue\/([^/?]+)(\?.*)?$/, handle: (m) => known(m[1], (t) => [200, issue(t)]) },
        ],
      };
    },
    connectwise: () => {
      const api = '\\/v4_6_release\\/apis\\/3\\.0';
      const ticket = (t: StandInTicket) => ({ id: Number(t.id), summary: t.title, status: t.closed ? { id: 9, name: 'Closed' } : { id: 1, name: 'New' }, closedFlag: t.closed });
      return {
        authorized: (h) => h.authorization === basic(`${c.companyId}+${c.publicKey}`, c.privateKey ?? '') && h.clientid === c.clientId,
        routes: [
          { method: 'GET', path: new RegExp(`^${api}/system/info$`), handle: () => [200, { version: 'v2024.1', isCloud: true }] },
          {
            method: 'POST',
            path: new RegExp(`^${api}/service/tickets$`),
            handle: (_m, b) => {
              const gaps = missing(b, ['summary', 'board.id', 'company.identifier']);
              if (gaps.length) return refuse(gaps);
              return [201, ticket(open(String(100 + next++), s(b.summary), s(b.initialDescription), b))];
            },
          },
          { method: 'POST', path: new RegExp(`^${api}/service/tickets/(\\d+)/notes$`), handle: (m, b) => known(m[1], (t) => (t.notes.push(s(b.text)), [201, { id: next++, text: b.text }])) },
          { method: 'GET', path: new RegExp(`^${api}/service/tickets/(\\d+)$`), handle: (m) => known(m[1], (t) => [200, ticket(t)]) },
        ],
      };
    },
    autotask: () => {
      const api = '\\/ATServicesRest\\/V1\\.0';
      return {
        authorized: (h) => h.username === c.username && h.secret === c.secret && h.apiintegrationcode === c.integrationCode,
        routes: [
          { method: 'GET', path: new RegExp(`^${api}/Tickets/entityInformation$`), handle: () => [200, { info: { name: 'Ticket', canCreate: true, canQuery: true } }] },
          {
            method: 'POST',
            path: new RegExp(`^${api}/Tickets$`),
            handle: (_m, b) => {
              const gaps = missing(b, ['companyID', 'title', 'status', 'priority', 'queueID']);
              if (gaps.length) return refuse(gaps);
              const id = String(5000 + next++);
              open(id, s(b.title), s(b.description), b);
              return [200, { itemId: Number(id) }];
            },
          },
          { method: 'POST', path: new RegExp(`^${api}/Tickets/(\\d+)/Notes$`), handle: (m, b) => known(m[1], (t) => (t.notes.push(s(b.description)), [200, { itemId: next++ }])) },
          {
            method: 'GET',
            path: new RegExp(`^${api}/Tickets/(\\d+)$`),
            handle: (m) => [200, { item: tickets.has(m[1] ?? '') ? ((t: StandInTicket) => ({ id: Number(t.id), title: t.title, status: t.closed ? 5 : 1 }))(tickets.get(m[1] ?? '') as StandInTicket) : null }],
          },
        ],
      };
    },
    freshservice: () => {
      const ticket = (t: StandInTicket) => ({ id: Number(t.id), subject: t.title, status: t.closed ? 5 : 2 });
      return {
        authorized: (h) => h.authorization === basic(c.apiKey ?? '', 'X'),
        routes: [
          { method: 'GET', path: /^\/api\/v2\/tickets\?per_page=1$/, handle: () => [200, { tickets: [] }] },
          {
            method: 'POST',
            path: /^\/api\/v2\/tickets$/,
            handle: (_m, b) => {
              const gaps = missing(b, ['subject', 'description', 'email', 'priority', 'status']);
              if (gaps.length) return refuse(gaps);
              return [201, { ticket: ticket(open(String(next++), s(b.subject), s(b.description), b)) }];
            },
          },
          { method: 'POST', path: /^\/api\/v2\/tickets\/(\d+)\/notes$/, handle: (m, b) => known(m[1], (t) => (t.notes.push(s(b.body)), [201, { conversation: { id: next++, body: b.body } }])) },
          { method: 'GET', path: /^\/api\/v2\/tickets\/(\d+)$/, handle: (m) => known(m[1], (t) => [200, { ticket: ticket(t) }]) },
        ],
      };
    },
    zendesk: () => {
      const ticket = (t: StandInTicket) => ({ id: Number(t.id), subject: t.title, status: t.closed ? 'solved' : 'new' });
      return {
        authorized: (h) => h.authorization === basic(`${c.email}/token`, c.apiToken ?? ''),
        routes: [
          { method: 'GET', path: /^\/api\/v2\/users\/me\.json$/, handle: () => [200, { user: { id: 35436, email: c.email, role: 'agent' } }] },
          {
            method: 'POST',
            path: /^\/api\/v2\/tickets\.json$/,
            handle: (_m, b) => {
              const gaps = missing(b, ['ticket.subject', 'ticket.comment.body']);
              if (gaps.length) return refuse(gaps);
              const t = o(b.ticket);
              return [201, { ticket: ticket(open(String(next++), s(t.subject), s(o(t.comment).body), b)) }];
            },
          },
          { method: 'PUT', path: /^\/api\/v2\/tickets\/(\d+)\.json$/, handle: (m, b) => known(m[1], (t) => (t.notes.push(s(o(o(b.ticket).comment).body)), [200, { ticket: ticket(t) }])) },
          { method: 'GET', path: /^\/api\/v2\/tickets\/(\d+)\.json$/, handle: (m) => known(m[1], (t) => [200, { ticket: ticket(t) }]) },
        ],
      };
    },
  };

  const spec = specs[provider]();
  const receiver: Receiver = await startReceiver((req, res) => {
    const send = ([status, body]: Answer) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (!spec.authorized(req.headers)) return send([401, { error: 'Unauthorized' }]);
    let body: Body;
    try {
      body = req.body ? o(JSON.parse(req.body)) : {};
    } catch {
      return send([400, { error: 'Invalid JSON' }]);
    }
    for (const route of spec.routes) {
      const match = req.method === route.method ? req.path.match(route.path) : null;
      if (match) return send(route.handle(match, body, req));
    }
    send([501, { error: `not scripted: ${req.method} ${req.path}` }]);
  });
  return {
    provider,
    url: receiver.url,
    credentials: { ...c, baseUrl: receiver.url },
    tickets,
    received: receiver.received,
    closeTicket(id) {
      const ticket = tickets.get(id);
      if (!ticket) throw new Error(`no ticket ${id}`);
      ticket.closed = true;
    },
    close: () => receiver.close(),
  };
}
