#!/usr/bin/env node
// `npm run bench` (after the load part of bench/run.js): throughput of many routes of the API, each against
// GET /health of the same server run just before it. A benchmark, not a test: it prints what it measured and
// exits 0 whatever the figures are.
//
//   1. A temp data dir; `svc server start`; over HTTP on 127.0.0.1 a partner registers (POST
//      /auth/register-partner: a partner admin whose permissions come from a role, as most callers' do), creates
//      an organization with 20 sites, 10 invited users, a custom role, 5 PAM rules, an enrollment key, one enrolled
//      agent/device with 20 elevation requests, one of each resource the other list/get families of the contract
//      read (script and a run of it, filter, group, webhook, alert channel, alert rule and its alert, PSA
//      connection, access review, API key, signer group, escalation policy, SSO provider, Slack and PSA integration
//      settings), and enables MFA (TOTP) to create the API keys: fresh keys with scope `*` (rate limit
//      100000/h, the spec's highest) per route and round, one for the warm-up and KEYS_PER_RUN that the measured
//      run takes in turn request by request, so that no run ends in 429s (one key alone filled its hour within a
//      warm-up and a 5 s run at 17,000 req/s).
//   2. Per route and round: a warm-up of BENCH_LOAD_WARMUP_SECONDS on the route, then GET /health for
//      BENCH_LOAD_SECONDS, then the route for BENCH_LOAD_SECONDS (autocannon in a separate process, bench/load.js,
//      BENCH_LOAD_CONNECTIONS connections). The machine's load drifts within a minute, so each route is compared
//      with the /health run just before it. Reads first; the writes (sites, an agent's heartbeat, an enrollment key, an alert rule, a user) last.
//   3. One table: per route the median req/s, the median ratio to its /health runs, p99, and the count of errors,
//      timeouts and non-2xx answers.
//
//   4. The server's CPU time per request of each run (utime + stime of its process, /proc/<pid>/stat), and its
//      ratio (the /health run's CPU per request over the route's): on a machine shared with other work the
//      req/s ratio swings with the load, the CPU each request costs the server much less.
//
// Targets (issue 10): every list and get route ≥ 0.5× /health with p99 < 25 ms; writes ≥ 0.2×; 0 non-2xx.
// Environment: BENCH_LOAD_SECONDS (5), BENCH_LOAD_WARMUP_SECONDS (1), BENCH_ROUTE_ROUNDS (1),
// BENCH_LOAD_CONNECTIONS (50), BENCH_ROUTES (a comma list of route names from the table below: only those),
// BENCH_CPU_PROF_DIR (the server writes a V8 CPU profile there: node --cpu-prof), BENCH_NODE_ARGS (more node flags for
// the server, space-separated, e.g. `--max-semi-space-size=4`), BENCH_ACCEPT_ENCODING (the
// Accept-Encoding of every request, /health's too: `gzip` by default, as the svc CLI, browsers, fetch and Python's
// requests send it; empty for none, to measure the plain bytes).
/* global process, console, setTimeout, fetch */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Secret, TOTP } from 'otpauth';
import { ADMIN_EMAIL, ADMIN_PASSWORD, api, enrollBenchAgent, loadRun, startServer, tmp } from './common.js';
import { cpuMs, median, printColumns, printMachine, round } from './report.js';

const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_LOAD_WARMUP_SECONDS ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUTE_ROUNDS ?? 1);
const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 50);
const ONLY = process.env.BENCH_ROUTES?.split(',')
  .map((r) => r.trim())
  .filter(Boolean);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const ACCEPT_ENCODING = process.env.BENCH_ACCEPT_ENCODING ?? 'gzip';
const ENCODING_HEADERS = ACCEPT_ENCODING ? { 'accept-encoding': ACCEPT_ENCODING } : {};
const SITES = 20;
const USERS = 10;
const RULES = 5;
const REQUESTS = 20;
const KEY_RATE_LIMIT = 100_000;
/** Keys a measured run takes in turn, so that no key's hourly window fills up within it at up to 40,000 req/s
 * (the spec's highest rateLimit is 100,000 an hour). */
const KEYS_PER_RUN = Math.max(1, Math.ceil((SECONDS * 40_000) / KEY_RATE_LIMIT));
/** The whole part, hard: the seed, then every run of the table (a route's warm-up, its /health run and its own run,
 * and the keys made for them) with twice the time they should take. */
const maxTotalSeconds = () => 300 + 2 * ROUNDS * routesOf({ alertId: 'any' }).length * (WARMUP_SECONDS + 2 * SECONDS + 3);
const EMAIL = 'partner-admin@bench.example';
/** The built-in alert template "CPU high" (its id is fixed by the seed migration). */
const CPU_HIGH_TEMPLATE = '00000000-0000-4000-a000-000000000001';
const PASSWORD = 'Bench-Partner-Passw0rd!';

/** A load run with the server's CPU time per response (µs) added as `cpuUs` (null without /proc). */
async function measuredRun(pid, target, options) {
  const before = cpuMs(pid);
  const result = await loadRun(target, options);
  const after = cpuMs(pid);
  const cpuUs = before === null || after === null || result.responses === 0 ? null : ((after - before) * 1000) / result.responses;
  return { ...result, cpuUs };
}

const totp = (secret) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();

/** The data every route of the table reads, made over the API as a partner admin would. */
export async function seed(url) {
  const registered = await api(url, 'POST', '/auth/register-partner', {
    body: { companyName: 'Bench MSP', name: 'Bench Admin', email: EMAIL, password: PASSWORD, acceptTerms: true },
  });
  // A registered partner waits for the system administrator to activate it.
  const admin = await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  await api(url, 'PATCH', `/orgs/partners/${registered.partner.id}`, {
    token: admin.tokens.accessToken,
    body: { status: 'active' },
  });
  let token = (await api(url, 'POST', '/auth/login', { body: { email: EMAIL, password: PASSWORD } })).tokens
    .accessToken;
  // Invitations and key management need a session with MFA.
  const setup = await api(url, 'POST', '/auth/mfa/setup', { token });
  token = (await api(url, 'POST', '/auth/mfa/enable', { token, body: { code: totp(setup.secret) } })).tokens
    .accessToken;
  const org = await api(url, 'POST', '/orgs/organizations', { token, body: { name: 'Bench Org', slug: 'bench-org' } });
  const sites = [];
  for (let i = 0; i < SITES; i++) {
    sites.push(
      await api(url, 'POST', '/orgs/sites', {
        token,
        body: { orgId: org.id, name: `Site ${String(i + 1).padStart(2, '0')}`, timezone: 'Europe/Berlin' },
      }),
    );
  }
  const roles = await api(url, 'GET', '/roles?limit=100', { token });
  const orgRole = roles.data.find((r) => r.scope === 'organization' && r.name === 'Org Admin') ?? roles.data[0];
  const role = await api(url, 'POST', '/roles', {
    token,
    body: {
      name: 'Bench Viewer',
      scope: 'organization',
      orgId: org.id,
      parentRoleId: orgRole.id,
      permissions: [{ resource: 'sites', action: 'read' }],
    },
    expect: [201, 400],
  }).catch(() => null);
  const users = [];
  for (let i = 0; i < USERS; i++) {
    const invited = await api(url, 'POST', '/users/invite', {
      token,
      body: { email: `user${i}@bench.example`, name: `User ${i}`, roleId: orgRole.id, orgId: org.id },
    });
    users.push(invited.id ?? invited.user?.id);
  }
  const rules = [];
  for (let i = 0; i < RULES; i++) {
    const created = await api(url, 'POST', '/pam/rules', {
      token,
      body: { orgId: org.id, name: `Rule ${i}`, matchSigner: `Vendor ${i}`, verdict: 'require_approval' },
    });
    rules.push(created.rule);
  }
  const { key: enrollmentKey, agent } = await enrollBenchAgent(url, token, { orgId: org.id, siteId: sites[0].id });
  const requests = [];
  for (let i = 0; i < REQUESTS; i++) {
    const res = await fetch(`${url}/api/v1/agents/${agent.agentId}/elevation-requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.authToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        subject_username: `CORP\\user${i % 5}`,
        target_executable_path: `C:\\Program Files\\Vendor ${i}\\setup.exe`,
        target_executable_hash: randomBytes(32).toString('hex'),
        target_executable_signer: 'Someone Else Inc',
        reason: `Install tool #${i}`,
      }),
    });
    const answer = await res.json();
    if (res.status !== 201) throw new Error(`elevation ingest answered ${res.status}: ${JSON.stringify(answer)}`);
    if (answer.id) requests.push(answer.id);
  }
  const devices = await api(url, 'GET', '/devices', { token });
  const deviceId = devices.data[0]?.id;
  // One of each resource the other read routes of the table get (every list/get family of the contract).
  const cond = { operator: 'AND', conditions: [{ field: 'osType', operator: 'equals', value: 'windows' }] };
  const script = await api(url, 'POST', '/scripts', {
    token,
    body: { orgId: org.id, name: 'Bench script', osTypes: ['windows'], language: 'powershell', content: 'Get-Date' },
  });
  const filter = await api(url, 'POST', '/filters', { token, body: { orgId: org.id, name: 'Bench windows', conditions: cond } });
  const group = await api(url, 'POST', '/groups', { token, body: { orgId: org.id, name: 'Bench group', deviceIds: [deviceId] } });
  const webhook = await api(url, 'POST', '/webhooks', {
    token,
    // Loopback (SVC_OUTBOUND_ALLOW of the server) on the discard port, for an event the bench never causes.
    body: { orgId: org.id, name: 'Bench hook', url: 'https://127.0.0.1:9/in', secret: 'bench-secret', events: ['user.deleted'] },
  });
  const channel = await api(url, 'POST', '/alerts/channels', {
    token,
    body: { orgId: org.id, name: 'Bench channel', type: 'email', config: { recipients: ['ops@bench.example'] } },
  });
  const alertRule = await api(url, 'POST', '/alert-templates/rules', {
    token,
    body: {
      orgId: org.id,
      templateId: CPU_HIGH_TEMPLATE,
      name: 'Bench CPU',
      conditions: { metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 0 },
    },
  });
  const psa = await api(url, 'POST', '/psa/connections', {
    token,
    body: {
      orgId: org.id,
      provider: 'zendesk',
      name: 'Bench helpdesk',
      credentials: { baseUrl: 'https://127.0.0.1:9', email: 'psa@bench.example', apiToken: 'bench-token' },
    },
  });
  const review = await api(url, 'POST', '/access-reviews', { token, body: { name: 'Bench review' } });
  const signerGroup = await api(url, 'POST', '/pam/signer-groups', {
    token,
    body: { orgId: org.id, name: 'Bench vendors', signers: ['Vendor 0', 'Vendor 1'] },
  });
  const policy = await api(url, 'POST', '/alerts/policies', {
    token,
    body: { orgId: org.id, name: 'Bench escalation', steps: [{ delayMinutes: 15, channelIds: [channel.id] }] },
  });
  // An OIDC provider with its endpoints given (no discovery), on the discard port: never signed in with.
  const sso = await api(url, 'POST', '/sso/providers', {
    token,
    body: {
      orgId: org.id,
      type: 'oidc',
      name: 'Bench IdP',
      clientId: 'bench',
      clientSecret: 'bench-client-secret',
      authorizationUrl: 'https://127.0.0.1:9/authorize',
      tokenUrl: 'https://127.0.0.1:9/token',
      autoProvision: false,
    },
  });
  const run = await api(url, 'POST', `/scripts/${script.id}/execute`, { token, body: { deviceIds: [deviceId] } });
  // Settings for the integration reads that answer 404 while none are stored.
  await api(url, 'POST', '/integrations/slack', { token, body: { orgId: org.id, webhookUrl: 'https://127.0.0.1:9/slack', channel: '#ops' } });
  await api(url, 'POST', '/integrations/psa', {
    token,
    body: { orgId: org.id, provider: 'zendesk', baseUrl: 'https://127.0.0.1:9', credentials: { email: 'psa@bench.example', apiToken: 'bench-token' } },
  });
  // An alert: the agent reports a sample over the rule's threshold; the pipeline raises it shortly after.
  const metrics = await fetch(`${url}/api/v1/agents/${agent.agentId}/metrics`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.authToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ samples: [{ metric: 'cpu.usage', value: 98 }] }),
  });
  if (metrics.status !== 202) throw new Error(`metrics answered ${metrics.status}: ${await metrics.text()}`);
  let alertId;
  for (let i = 0; i < 100 && !alertId; i++) {
    alertId = (await api(url, 'GET', '/alerts', { token })).data?.[0]?.id;
    if (!alertId) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (!alertId) process.stderr.write('  (no alert raised within 20 s: the table goes without "one alert")\n');
  // Software (03 §4.3): a catalog item with a version, a deployment to the bench device and the device's inventory
  // from a heartbeat; and the agent's diagnostic and event log entries (03 §4.4).
  const catalogItem = await api(url, 'POST', '/software/catalog', {
    token,
    body: { orgId: org.id, name: 'Bench 7-Zip', vendor: 'Igor Pavlov', category: 'compression', platforms: ['windows', 'linux', 'macos'] },
  });
  await api(url, 'POST', `/software/catalog/${catalogItem.data.id}/versions`, {
    token,
    body: { version: '24.08', releaseDate: '2024-08-11', downloadUrl: 'https://127.0.0.1:9/7z.msi', supportedPlatforms: ['windows', 'linux', 'macos'] },
  });
  const deployment = await api(url, 'POST', '/software/deployments', {
    token,
    body: { orgId: org.id, softwareId: catalogItem.data.id, action: 'install', deviceIds: [deviceId], requestedBy: 'bench' },
  });
  const software = Array.from({ length: 50 }, (_, i) => ({ name: i === 0 ? 'Bench 7-Zip' : `Program ${i}`, version: `1.${i}` }));
  const agentCalls = [
    ['POST', `/agents/${agent.agentId}/heartbeat`, { software }],
    ['POST', `/agents/${agent.agentId}/logs`, { logs: [{ timestamp: new Date().toISOString(), level: 'info', component: 'bench', message: 'bench entry' }] }],
    ['PUT', `/agents/${agent.agentId}/eventlogs`, { events: [{ timestamp: new Date().toISOString(), level: 'info', category: 'system', source: 'bench', message: 'bench event' }] }],
  ];
  for (const [method, path, body] of agentCalls) {
    const res = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${agent.authToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  }
  const apiKey = await api(url, 'POST', '/api-keys', {
    token,
    body: { orgId: org.id, name: 'bench-seed', scopes: ['devices:read'], rateLimit: 1000 },
  });
  // An entry of the organization: the API keys (organization callers) see those only.
  const audit = await api(url, 'GET', `/audit-logs/logs?limit=1&orgId=${org.id}`, { token });
  return {
    token,
    orgId: org.id,
    siteId: sites[1].id,
    userId: users[0],
    roleId: role?.id ?? orgRole.id,
    ruleId: rules[0].id,
    requestId: requests[0],
    deviceId,
    auditId: audit.data[0]?.id,
    enrollmentKeyId: enrollmentKey.id,
    scriptId: script.id,
    filterId: filter.data.id,
    groupId: group.data.id,
    webhookId: webhook.id,
    channelId: channel.id,
    alertRuleId: alertRule.data.id,
    alertId,
    psaId: psa.id,
    reviewId: review.id,
    apiKeyId: apiKey.id,
    signerGroupId: signerGroup.signerGroup.id,
    policyId: policy.id,
    ssoId: sso.data.id,
    executionId: run.executions[0].executionId,
    partnerId: registered.partner.id,
    adminToken: admin.tokens.accessToken,
    agentId: agent.agentId,
    agentToken: agent.authToken,
    catalogId: catalogItem.data.id,
    deploymentId: deployment.data.id,
  };
}

/** The headers of a route's caller other than an API key (`key` routes get theirs per run): the partner admin's
 * session, the system administrator's, or the enrolled agent's token. */
export function bearerOf(route, s) {
  const token = { session: s.token, admin: s.adminToken, agent: s.agentToken }[route.auth];
  return token === undefined ? {} : { authorization: `Bearer ${token}` };
}

/** The table: name, method, path, how it authenticates, and for writes the body. */
export function routesOf(s) {
  const read = (name, p, auth = 'key') => ({ name, method: 'GET', path: p, auth, kind: 'read' });
  return [
    read('sites list', '/orgs/sites'),
    read('one site', `/orgs/sites/${s.siteId}`),
    read('orgs (accessible)', '/orgs/'),
    read('organizations list', '/orgs/organizations', 'session'),
    read('one organization', `/orgs/organizations/${s.orgId}`, 'session'),
    read('users list', '/users'),
    read('one user', `/users/${s.userId}`),
    read('roles list', '/roles'),
    read('one role', `/roles/${s.roleId}`),
    read('pam elevation requests', '/pam/elevation-requests'),
    read('one elevation request', `/pam/elevation-requests/${s.requestId}`),
    read('pam rules', '/pam/rules'),
    read('one pam rule', `/pam/rules/${s.ruleId}`),
    read('audit list', '/audit-logs/logs'),
    read('one audit entry', `/audit-logs/logs/${s.auditId}`),
    read('devices list', '/devices'),
    read('one device', `/devices/${s.deviceId}`),
    read('access reviews', '/access-reviews'),
    read('api-keys list', '/api-keys', 'session'),
    read('enrollment keys', '/enrollment-keys', 'session'),
    read('one enrollment key', `/enrollment-keys/${s.enrollmentKeyId}`, 'session'),
    read('users/me', '/users/me', 'session'),
    // The partner admin's review (a partner-level one: the organization's API keys do not see it).
    read('one access review', `/access-reviews/${s.reviewId}`, 'session'),
    read('one api key', `/api-keys/${s.apiKeyId}`, 'session'),
    read('pam active', '/pam/active'),
    read('device commands', `/devices/${s.deviceId}/commands`),
    read('alerts list', '/alerts'),
    ...(s.alertId ? [read('one alert', `/alerts/${s.alertId}`)] : []),
    read('alert summary', '/alerts/summary'),
    read('alert rules', '/alert-templates/rules'),
    read('one alert rule', `/alert-templates/rules/${s.alertRuleId}`),
    read('alert channels', '/alerts/channels'),
    read('one alert channel', `/alerts/channels/${s.channelId}`),
    read('webhooks list', '/webhooks'),
    read('one webhook', `/webhooks/${s.webhookId}`),
    read('scripts list', '/scripts'),
    read('one script', `/scripts/${s.scriptId}`),
    read('filters list', '/filters'),
    read('one filter', `/filters/${s.filterId}`),
    read('groups list', '/groups'),
    read('one group', `/groups/${s.groupId}`),
    read('group devices', `/groups/${s.groupId}/devices`),
    read('tags', '/tags'),
    read('notifications', '/notifications', 'session'),
    read('unread notifications', '/notifications/unread-count', 'session'),
    read('psa connections', '/psa/connections'),
    read('one psa connection', `/psa/connections/${s.psaId}`),
    read('mobile devices', '/mobile/devices'),
    read('one mobile device metrics', `/mobile/devices/${s.deviceId}/metrics`),
    read('mobile summary', '/mobile/summary'),
    // The rest of the contract's list and get routes (not /audit-logs/verify, which walks every chain, the exports,
    // the public SSO flow and documents, or /health itself).
    read('auth/me', '/auth/me', 'session'),
    read('own partner', '/orgs/partners/me', 'session'),
    read('partners list', '/orgs/partners', 'admin'),
    read('one partner', `/orgs/partners/${s.partnerId}`, 'admin'),
    read('user roles', '/users/roles'),
    read('available permissions', '/roles/permissions/available'),
    read('role users', `/roles/${s.roleId}/users`),
    read('role effective permissions', `/roles/${s.roleId}/effective-permissions`),
    read('audit list (/audit-logs)', '/audit-logs'),
    read('audit search', '/audit-logs/search?q=site'),
    read('device metrics', `/devices/${s.deviceId}/metrics`),
    read('pam signer groups', '/pam/signer-groups'),
    read('one signer group', `/pam/signer-groups/${s.signerGroupId}`),
    read('pam config', '/pam/config'),
    read('pam approver devices', '/pam/approver-devices', 'session'),
    read('webhook deliveries', `/webhooks/${s.webhookId}/deliveries`),
    read('alert templates', '/alert-templates/templates'),
    read('built-in alert templates', '/alert-templates/templates/built-in'),
    read('one alert template', `/alert-templates/templates/${CPU_HIGH_TEMPLATE}`),
    read('alert correlations', '/alert-templates/correlations'),
    read('alert correlation groups', '/alert-templates/correlations/groups'),
    ...(s.alertId ? [read("one alert's correlations", `/alert-templates/correlations/${s.alertId}`)] : []),
    read('alert rules (/alerts/rules)', '/alerts/rules'),
    read('one alert rule (/alerts/rules)', `/alerts/rules/${s.alertRuleId}`),
    read('escalation policies', '/alerts/policies'),
    read('one escalation policy', `/alerts/policies/${s.policyId}`),
    read('sso presets', '/sso/presets'),
    read('sso providers', '/sso/providers'),
    read('one sso provider', `/sso/providers/${s.ssoId}`),
    read('psa connection tickets', `/psa/connections/${s.psaId}/tickets`),
    read('psa tickets', '/psa/tickets'),
    read('group membership log', `/groups/${s.groupId}/membership-log`),
    read('device groups', '/device-groups'),
    read('one device group', `/device-groups/${s.groupId}`),
    read('device group devices', `/device-groups/${s.groupId}/devices`),
    read('device group membership log', `/device-groups/${s.groupId}/membership-log`),
    read('devices with a tag', '/tags/devices?tag=bench'),
    read('search', '/search?q=bench', 'session'),
    read('communication integrations', '/integrations/communication'),
    read('monitoring integrations', '/integrations/monitoring'),
    read('ticketing integrations', '/integrations/ticketing'),
    read('psa integration', '/integrations/psa'),
    read('agent command poll', `/agents/${s.agentId}/commands`, 'agent'),
    read('script library', '/scripts/system-library'),
    read('script executions', `/scripts/${s.scriptId}/executions`),
    read('one script execution', `/scripts/executions/${s.executionId}`),
    read('custom fields', '/custom-fields'),
    read('software catalog', '/software/catalog'),
    read('one catalog item', `/software/catalog/${s.catalogId}`),
    read('catalog search', '/software/catalog/search?q=zip'),
    read('catalog versions', `/software/catalog/${s.catalogId}/versions`),
    read('software deployments', '/software/deployments'),
    read('one software deployment', `/software/deployments/${s.deploymentId}`),
    read('deployment results', `/software/deployments/${s.deploymentId}/results`),
    read('software inventory', '/software/inventory'),
    read('device software', `/software/inventory/${s.deviceId}`),
    read('diagnostic logs', `/devices/${s.deviceId}/diagnostic-logs`),
    read('event logs', `/devices/${s.deviceId}/eventlogs`),
    read('mobile alert inbox', '/mobile/alerts/inbox'),
    read('mobile pending approvals', '/mobile/approvals/pending', 'session'),
    read('mobile pending count', '/mobile/approvals/pending/count', 'session'),
    read('one mobile approval', `/mobile/approvals/${s.requestId}`, 'session'),
    {
      name: 'create site',
      method: 'POST',
      path: '/orgs/sites',
      auth: 'key',
      kind: 'write',
      body: { orgId: s.orgId, name: 'Bench write', timezone: 'UTC' },
    },
    {
      name: 'update site',
      method: 'PATCH',
      path: `/orgs/sites/${s.siteId}`,
      auth: 'key',
      kind: 'write',
      body: { name: 'Site 02 (renamed)' },
    },
    // More writes of other modules and callers: an agent's heartbeat (the most frequent write of a fleet), a key
    // made with its secret, a rule and a user changed.
    {
      name: 'agent heartbeat',
      method: 'POST',
      path: `/agents/${s.agentId}/heartbeat`,
      auth: 'agent',
      kind: 'write',
      body: { status: 'online', metrics: { cpuPercent: 12, ramPercent: 40, diskPercent: 55 } },
    },
    {
      name: 'create enrollment key',
      method: 'POST',
      path: '/enrollment-keys',
      auth: 'session',
      kind: 'write',
      body: { orgId: s.orgId, name: 'Bench enrollment', maxUsage: 5 },
    },
    {
      name: 'update alert rule',
      method: 'PATCH',
      path: `/alert-templates/rules/${s.alertRuleId}`,
      auth: 'key',
      kind: 'write',
      body: { description: 'Changed by the benchmark' },
    },
    {
      name: 'update user',
      method: 'PATCH',
      path: `/users/${s.userId}`,
      auth: 'session',
      kind: 'write',
      body: { name: 'Bench user (renamed)' },
    },
  ].filter((r) => !ONLY || ONLY.includes(r.name));
}

async function main() {
  const limitSeconds = maxTotalSeconds();
  setTimeout(() => {
    console.error(`bench routes: aborted after ${limitSeconds} s`);
    process.exit(0);
  }, limitSeconds * 1000).unref();
  for (const [name, n] of Object.entries({ SECONDS, WARMUP_SECONDS, ROUNDS, CONNECTIONS })) {
    if (!Number.isInteger(n) || n < (name === 'WARMUP_SECONDS' ? 0 : 1))
      throw new Error(`${name} must be a positive integer`);
  }
  printMachine('svc bench routes');
  console.log(
    `routes: 127.0.0.1, autocannon in a separate process, ${CONNECTIONS} connections, ${SECONDS} s per run after a` +
      ` ${WARMUP_SECONDS} s warm-up, each route paired with a /health run just before it, ${ROUNDS} round(s)` +
      ` (medians); fresh API keys with scope * per route and round (rate limit ${KEY_RATE_LIMIT}/h), ${KEYS_PER_RUN} taken in turn per run;` +
      ` Accept-Encoding: ${ACCEPT_ENCODING || '(none)'}`,
  );
  const dataDir = path.join(tmp, 'routes-data');
  const nodeArgs = [...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}`] : []), ...NODE_ARGS];
  const server = await startServer(dataDir, { nodeArgs, env: { SVC_ACCESS_TOKEN_TTL_SECONDS: '7200', SVC_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  const loadBefore = os.loadavg();
  const rows = [];
  try {
    const s = await seed(server.url);
    const routes = routesOf(s);
    // Keys are made as the runs need them: one for the warm-up, KEYS_PER_RUN taken in turn by the measured run.
    let made = 0;
    const newKey = async () => {
      const key = await api(server.url, 'POST', '/api-keys', {
        token: s.token,
        body: { orgId: s.orgId, name: `bench-route-${++made}`, scopes: ['*'], rateLimit: KEY_RATE_LIMIT },
      });
      return key.key;
    };
    const runs = new Map(routes.map((r) => [r.name, { health: [], route: [] }]));
    for (let n = 0; n < ROUNDS; n++) {
      for (const route of routes) {
        const byKey = route.auth === 'key';
        const headers = { ...bearerOf(route, s), ...ENCODING_HEADERS };
        const target = `${server.url}/api/v1${route.path}`;
        const keyed = async (count) => {
          if (!byKey) return undefined;
          const sets = [];
          for (let i = 0; i < count; i++) sets.push({ 'x-api-key': await newKey() });
          return sets;
        };
        // Made before the warm-up: a key made between the /health run and the route's would be a write just
        // before the measurement.
        const warmUpKeys = await keyed(1);
        const runKeys = await keyed(KEYS_PER_RUN);
        const options = {
          connections: CONNECTIONS,
          seconds: SECONDS,
          headers,
          method: route.method,
          body: route.body,
        };
        if (WARMUP_SECONDS > 0) await loadRun(target, { ...options, seconds: WARMUP_SECONDS, rotate: warmUpKeys });
        const health = await measuredRun(server.child.pid, `${server.url}/health`, {
          connections: CONNECTIONS,
          seconds: SECONDS,
          headers: ENCODING_HEADERS,
        });
        const result = await measuredRun(server.child.pid, target, { ...options, rotate: runKeys });
        runs.get(route.name).health.push(health);
        runs.get(route.name).route.push(result);
        process.stderr.write(
          `  ${route.name}: ${Math.round(result.rps)} req/s (/health ${Math.round(health.rps)}), p99 ${result.latencyMs.p99} ms, ${result.bytesPerResponse} bytes/response, CPU ${round(result.cpuUs)} µs/req (/health ${round(health.cpuUs)}), ${JSON.stringify(result.statusCodes)}\n`,
        );
      }
    }
    for (const route of routes) {
      const { health, route: measured } = runs.get(route.name);
      const ratio = median(measured.map((r, i) => r.rps / health[i].rps));
      const p99 = median(measured.map((r) => r.latencyMs.p99));
      const cpu = median(measured.map((r) => r.cpuUs ?? NaN));
      const cpuRatio = median(measured.map((r, i) => (health[i].cpuUs ?? NaN) / (r.cpuUs ?? NaN)));
      const failed = measured.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0);
      const target = route.kind === 'read' ? 0.5 : 0.2;
      const pass = ratio >= target && (route.kind === 'write' || p99 < 25) && failed === 0;
      rows.push([
        `${route.method} ${route.path.replace(/[0-9a-f-]{36}/g, ':id')} (${route.name}, ${route.auth})`,
        `${Math.round(median(measured.map((r) => r.rps)))}`,
        `${Math.round(median(health.map((r) => r.rps)))}`,
        `${round(ratio, 2)}×`,
        `${round(p99)}`,
        `${round(cpu, 0)}`,
        `${round(cpuRatio, 2)}×`,
        String(failed),
        route.kind === 'read' ? '≥ 0.50×, p99 < 25' : '≥ 0.20×',
        pass ? 'pass' : 'FAIL',
      ]);
    }
  } finally {
    await server.stop();
  }
  const table = [['route', 'req/s', '/health', 'ratio', 'p99 ms', 'CPU µs/req', 'CPU ratio', 'non-2xx', 'target', 'result'], ...rows];
  console.log('');
  printColumns(table);
  const fmt = (l) => l.map((n) => n.toFixed(2)).join(' ');
  console.log(`\nload average before ${fmt(loadBefore)}, after ${fmt(os.loadavg())}`);
}

// Run as a script (bench/run.js spawns it); imported, it only lends its seed and table (profiling scripts).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`bench routes failed: ${err instanceof Error ? err.message : String(err)}`);
  });
}
