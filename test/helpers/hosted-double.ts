import { randomBytes, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A double of the hosted deployment of issue 15 (items 1-6), for tests: a loopback node:http server that answers
 * as that release does where it departs from the bundled server, and with the bundled server's shapes elsewhere.
 * - sign-in answers `tokens: {accessToken, expiresInSeconds}` without a refresh token; the refresh token and a
 *   CSRF token travel as cookies with a branded prefix (`acme_refresh_token`, `acme_csrf_token`); refresh needs
 *   both cookies and `x-acme-csrf` carrying the CSRF cookie's value, and refuses a refresh token in the body;
 * - MFA setup and enable require `currentPassword` (400 naming it when absent, 401 when wrong);
 * - date-time fields refuse a date alone (access-reviews create);
 * - no `GET /pam/rules/:id`, `/pam/elevation-requests/:id`, `/pam/signer-groups/:id`, `/pam/elevation-audit/export`,
 *   `/audit-logs/verify`: 404 `{error:"Not Found", path}` like any unknown route;
 * - `GET /audit-logs/export` answers CSV whatever the format, newest first, at most `exportCap` rows, filters ignored;
 * - `GET /software/inventory` and `/software/inventory/:deviceId` answer the current build's flat rows (05 "4.3");
 * - API keys only on three routes (`GET /orgs/`, `GET /devices`, `GET /sites`); anywhere else 401.
 * Anything unscripted is a 404 of an unknown route.
 */
export interface HostedDouble {
  url: string;
  email: string;
  password: string;
  apiKey: string;
  /** Every access token issued so far stops working (as after 15 minutes). */
  expireAccessTokens(): void;
  /** Bodies of access reviews created, as received. */
  readonly reviews: Record<string, unknown>[];
  /** Refreshes answered with new tokens. */
  readonly refreshes: number;
  /** The request log: method and path. */
  readonly requests: string[];
  /** The same log with each request's query string (`GET /api/v1/pam/rules?orgId=…`). */
  readonly urls: string[];
  close(): Promise<void>;
}

export interface HostedDoubleOptions {
  /** Cookie and header brand (default `acme`). */
  prefix?: string;
  /** Audit rows held (default 10,050) and the export's cap (default 10,000). */
  auditRows?: number;
  exportCap?: number;
}

type Json = Record<string, unknown>;

const ORG_ID = '3b9e0c4e-8a51-4c8e-9b1f-0a2d4c6e8f10';
const RULE = { id: '7d41a0c2-1b3d-4e5f-8a9b-0c1d2e3f4a5b', name: 'Allow installers', verdict: 'approve', priority: 10, enabled: true, orgId: ORG_ID };
const SIGNER_GROUP = { id: '4e8b1c2d-3e4f-4a5b-8c9d-0e1f2a3b4c5d', name: 'Vendors', signers: [], thumbprints: [], orgId: ORG_ID };
const REQUEST = { id: '2a7c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e', status: 'pending', flowType: 'uac', orgId: ORG_ID };
const ACTIONS = ['auth.login', 'site.create', 'user.invite'];
export const DEVICE_ID = '6c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
/** The current build's inventory rows (05 wire notes "4.3"). */
const SOFTWARE_ROWS = [
  { id: '5f2e3d4c-1b0a-4f9e-8d7c-6b5a4f3e2d1c', deviceId: DEVICE_ID, orgId: ORG_ID, catalogId: null, name: '7-Zip', version: '23.01', vendor: 'Igor Pavlov', installDate: null, installLocation: null, uninstallString: null, isManaged: false, lastSeen: '2026-11-01T00:00:00.000Z', fileHash: null, hashAlgorithm: null },
];

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  const parsed = JSON.parse(text) as unknown;
  return typeof parsed === 'object' && parsed !== null ? (parsed as Json) : {};
}

function cookiesOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0) out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return out;
}

const token = () => randomBytes(18).toString('base64url');

export async function startHostedDouble(options: HostedDoubleOptions = {}): Promise<HostedDouble> {
  const prefix = options.prefix ?? 'acme';
  const email = 'admin@hosted.test';
  const password = 'Hosted-Passw0rd!';
  const apiKey = `svc_${token()}`;
  const exportCap = options.exportCap ?? 10_000;
  const userId = randomUUID();
  const access = new Set<string>();
  let refresh: { token: string; csrf: string } | undefined;
  let mfaEnabled = false;
  let refreshes = 0;
  const reviews: Json[] = [];
  const requests: string[] = [];
  const urls: string[] = [];
  // Oldest first here; the export answers newest first.
  const start = Date.parse('2026-01-01T00:00:00Z');
  const audit = Array.from({ length: options.auditRows ?? 10_050 }, (_, i) => ({
    id: randomUUID(),
    timestamp: new Date(start + i * 60_000).toISOString(),
    orgId: ORG_ID,
    actorEmail: email,
    action: ACTIONS[i % ACTIONS.length] ?? 'auth.login',
    resourceType: 'user',
    resourceName: email,
    result: 'success',
  }));

  const user = () => ({ id: userId, email, name: 'Hosted Admin', mfaEnabled });
  /** A new session: the access token in the body, the refresh and CSRF tokens only as cookies. */
  const session = () => {
    const accessToken = token();
    access.add(accessToken);
    refresh = { token: token(), csrf: token() };
    const cookies = [
      `${prefix}_refresh_token=${refresh.token}; Path=/api/v1/auth; HttpOnly; SameSite=Strict; Max-Age=604800`,
      `${prefix}_csrf_token=${refresh.csrf}; Path=/; SameSite=Strict; Max-Age=604800`,
    ];
    return { tokens: { accessToken, expiresInSeconds: 900 }, cookies };
  };
  const bearer = (req: IncomingMessage) => /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  const KEY_ROUTES = new Set(['GET /api/v1/orgs/', 'GET /api/v1/devices', 'GET /api/v1/sites']);

  /** The caller's credential on this route: a live access token, or a key where keys are accepted. */
  const authenticated = (req: IncomingMessage, route: string): boolean => {
    const key = req.headers['x-api-key'];
    if (typeof key === 'string') return key === apiKey && KEY_ROUTES.has(route);
    const presented = bearer(req);
    return presented !== undefined && access.has(presented);
  };
  const passwordProblem = (body: Json): [number, Json] | undefined => {
    if (typeof body.currentPassword !== 'string')
      return [400, { error: 'Validation failed', details: [{ path: ['currentPassword'], message: 'Required' }] }];
    if (body.currentPassword !== password) return [401, { error: 'Current password is incorrect', code: 'INVALID_CURRENT_PASSWORD' }];
    return undefined;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://double');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    requests.push(route);
    urls.push(`${route}${url.search}`);
    const notFound = () => send(res, 404, { error: 'Not Found', path: url.pathname });

    if (route === 'POST /api/v1/auth/login') {
      const body = await readJson(req);
      if (body.email !== email || body.password !== password) return send(res, 401, { error: 'Invalid email or password', code: 'INVALID_CREDENTIALS' });
      const { tokens, cookies } = session();
      return send(res, 200, { mfaRequired: false, user: user(), tokens }, { 'set-cookie': cookies });
    }
    if (route === 'POST /api/v1/auth/refresh') {
      const body = await readJson(req);
      if (body.refreshToken !== undefined) return send(res, 400, { error: 'Refresh token must be sent as a cookie' });
      const cookies = cookiesOf(req);
      const csrf = req.headers[`x-${prefix}-csrf`];
      if (!refresh || cookies[`${prefix}_refresh_token`] !== refresh.token) return send(res, 401, { error: 'Invalid refresh token' });
      if (cookies[`${prefix}_csrf_token`] !== refresh.csrf || csrf !== refresh.csrf) return send(res, 403, { error: 'CSRF token mismatch' });
      refreshes++;
      const next = session();
      return send(res, 200, { tokens: next.tokens }, { 'set-cookie': next.cookies });
    }
    if (!authenticated(req, route)) {
      if (!KNOWN.has(route) && !/^GET \/api\/v1\/pam\/(rules|signer-groups|elevation-requests)\/[^/]+$/.test(route)) return notFound();
      return send(res, 401, { error: 'Invalid or expired token' });
    }
    switch (route) {
      case 'GET /api/v1/users/me':
        return send(res, 200, { ...user(), mfaMethod: mfaEnabled ? 'totp' : null, scope: 'organization', partnerId: null, orgId: ORG_ID, roleId: null, roleName: 'Org Admin', permissions: [], lastLoginAt: null, createdAt: '2026-01-01T00:00:00.000Z' });
      case 'GET /api/v1/orgs/':
        return send(res, 200, { data: [{ id: ORG_ID, name: 'Hosted Org' }], pagination: { page: 1, limit: 50, total: 1 } });
      case 'GET /api/v1/sites':
        return send(res, 200, { data: [], pagination: { page: 1, limit: 50, total: 0 } });
      case 'POST /api/v1/auth/mfa/setup': {
        const problem = passwordProblem(await readJson(req));
        if (problem) return send(res, ...problem);
        return send(res, 200, { secret: 'JBSWY3DPEHPK3PXP', otpAuthUrl: `otpauth://totp/Hosted:${email}?secret=JBSWY3DPEHPK3PXP`, qrCodeDataUrl: 'data:image/png;base64,', recoveryCodes: ['aaaa-bbbb'] });
      }
      case 'POST /api/v1/auth/mfa/enable': {
        const body = await readJson(req);
        const problem = passwordProblem(body);
        if (problem) return send(res, ...problem);
        if (typeof body.code !== 'string' || !/^\d{6}$/.test(body.code)) return send(res, 400, { error: 'Invalid MFA code' });
        mfaEnabled = true;
        const { tokens, cookies } = session();
        return send(res, 200, { success: true, user: user(), tokens }, { 'set-cookie': cookies });
      }
      case 'POST /api/v1/access-reviews': {
        const body = await readJson(req);
        if (typeof body.dueDate === 'string' && !/^\d{4}-\d{2}-\d{2}T/.test(body.dueDate))
          return send(res, 400, { error: 'Validation failed', details: [{ path: ['dueDate'], message: 'Invalid datetime' }] });
        reviews.push(body);
        return send(res, 201, { id: randomUUID(), name: body.name, status: 'pending', dueDate: body.dueDate ?? null, createdAt: new Date().toISOString() });
      }
      case 'GET /api/v1/pam/rules':
        return send(res, 200, { success: true, rules: [RULE] });
      case 'GET /api/v1/pam/signer-groups':
        return send(res, 200, { success: true, signerGroups: [SIGNER_GROUP] });
      case 'GET /api/v1/pam/elevation-requests':
        return send(res, 200, { requests: [REQUEST], pagination: { page: 1, limit: 100, total: 1 } });
      case 'GET /api/v1/audit-logs/export': {
        const columns = Object.keys(audit[0] ?? {});
        const rows = audit.slice(-exportCap).reverse();
        res.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' });
        res.end(`${[columns.join(','), ...rows.map((row) => columns.map((c) => String(row[c as keyof typeof row])).join(','))].join('\n')}\n`);
        return;
      }
      case 'GET /api/v1/software/inventory':
        return send(res, 200, { data: SOFTWARE_ROWS, total: SOFTWARE_ROWS.length });
      case `GET /api/v1/software/inventory/${DEVICE_ID}`:
        return send(res, 200, { data: SOFTWARE_ROWS });
      default:
        return notFound();
    }
  };
  const KNOWN = new Set([
    'GET /api/v1/users/me',
    'GET /api/v1/orgs/',
    'GET /api/v1/sites',
    'GET /api/v1/devices',
    'POST /api/v1/auth/mfa/setup',
    'POST /api/v1/auth/mfa/enable',
    'POST /api/v1/access-reviews',
    'GET /api/v1/pam/rules',
    'GET /api/v1/pam/signer-groups',
    'GET /api/v1/pam/elevation-requests',
    'GET /api/v1/audit-logs/export',
    'GET /api/v1/software/inventory',
    `GET /api/v1/software/inventory/${DEVICE_ID}`,
  ]);

  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => send(res, 400, { error: 'Malformed JSON in request body' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    email,
    password,
    apiKey,
    expireAccessTokens: () => access.clear(),
    reviews,
    get refreshes() {
      return refreshes;
    },
    requests,
    urls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
