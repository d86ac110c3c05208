import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { loggerOptions } from '../../src/server/logging.js';
import { outboxEvents, scriptExecutions } from '../../src/server/db/schema/index.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, recordedCalls, type TestApp } from '../helpers/server.js';
import { adminToken, mintToken, seedWorld, type World } from '../helpers/seed.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';

const API = '/api/v1';
const SECRET = 'tok-Zq81-very-secret-value';
const SCRIPT = {
  name: 'Greet',
  description: 'Says hello',
  category: 'Demo',
  osTypes: ['linux', 'macos'],
  language: 'bash',
  content: 'echo "{{var.greeting}}, {{ var.who }}"\ncurl -H "Authorization: $SVC_VAR_APITOKEN" http://example.invalid\n',
  parameters: [
    { name: 'greeting', type: 'string', defaultValue: 'hello' },
    { name: 'who', type: 'string', customField: 'owner' },
    { name: 'apiToken', type: 'string', secret: true, required: true },
  ],
  timeoutSeconds: 120,
  exitCodeSeverityMapping: { '2': 'high', '3': 'critical' },
};

/** Every row of every table, as text: where a secret must never be found. */
function everyStoredRow(t: TestApp): string {
  const tables = t.db.$client.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  return tables.map(({ name }) => JSON.stringify(t.db.$client.prepare(`SELECT * FROM "${name}"`).all())).join('\n');
}

describe('scripts (03 §4.6, §4.7; 05 wire notes 4.7)', () => {
  let t: TestApp;
  let w: World;
  const { as, call, expectNoLeak } = recordedCalls(() => t);
  const put = (token: string, url: string, body: unknown) => call('PUT', `${API}${url}`, { token, body });
  const create = async (body: Record<string, unknown> = {}, token = w.tokens.orgUser) => {
    const res = await as(token, 'POST', '/scripts', { ...SCRIPT, ...body });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; orgId: string; version: number };
  };
  const execution = async (id: string) => (await as(w.tokens.orgUser, 'GET', `/scripts/executions/${id}`)).body;

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  afterEach(async () => {
    expectNoLeak(SECRET, []);
  });

  it('03§4.7 create answers the bare row with the defaults (timeout 300, runAs system, version 1)', async () => {
    const res = await as(w.tokens.orgUser, 'POST', '/scripts', { name: 'Min', osTypes: ['windows'], language: 'powershell', content: 'Get-Date' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      orgId: w.orgA1.id,
      name: 'Min',
      description: null,
      category: null,
      osTypes: ['windows'],
      language: 'powershell',
      content: 'Get-Date',
      parameters: [],
      timeoutSeconds: 300,
      runAs: 'system',
      isSystem: false,
      version: 1,
      exitCodeSeverityMapping: null,
      createdBy: w.users.orgUser.id,
    });
  });

  it('05§4.7 every field is bounded: name 1-255, category ≤100, osTypes ≥1, language, timeout 1-3600, runAs', async () => {
    const bad: Record<string, unknown>[] = [
      { name: '' },
      { name: 'x'.repeat(256) },
      { category: 'c'.repeat(101) },
      { osTypes: [] },
      { osTypes: ['beos'] },
      { language: 'perl' },
      { timeoutSeconds: 0 },
      { timeoutSeconds: 3601 },
      { runAs: 'root' },
      { exitCodeSeverityMapping: { x: 'high' } },
      { exitCodeSeverityMapping: { '1': 'urgent' } },
      { parameters: [{ name: '1bad' }] },
      { parameters: [{ name: 'a' }, { name: 'A' }] },
      { parameters: [{ name: 's', secret: true, defaultValue: 'x' }] },
      { unknownField: 1 },
    ];
    for (const body of bad) {
      const res = await as(w.tokens.orgUser, 'POST', '/scripts', { ...SCRIPT, ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const partnerOfMany = await as(w.tokens.aAdmin, 'POST', '/scripts', SCRIPT);
    expect(partnerOfMany.body.error).toBe('orgId is required when partner has multiple organizations');
    expect((await as(w.tokens.system, 'POST', '/scripts', SCRIPT)).body.error).toBe('orgId is required');
    expect((await as(w.tokens.orgUser, 'POST', '/scripts', { ...SCRIPT, orgId: w.orgA2.id })).body.error).toBe('Access to this organization denied');
  });

  it('03§4.6 a secret variable cannot be written into the content as {{var.key}} (400)', async () => {
    const res = await as(w.tokens.orgUser, 'POST', '/scripts', { ...SCRIPT, content: 'echo {{var.apiToken}}' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Secret variable apiToken can only be read from the environment variable SVC_VAR_APITOKEN');
  });

  it('05§4.7 get, update (version + 1), list newest first with filters, delete; 404 Script not found', async () => {
    const a = await create();
    const b = await create({ name: 'Other', language: 'python', content: 'print(1)' });
    const updated = await put(w.tokens.orgUser, `/scripts/${a.id}`, { name: 'Greet 2', timeoutSeconds: 30 });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Greet 2', timeoutSeconds: 30, version: 2 });
    expect((await put(w.tokens.orgUser, `/scripts/${a.id}`, {})).body.error).toContain('No updates provided');

    const list = await as(w.tokens.orgUser, 'GET', '/scripts');
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([a.id, b.id]);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect((await as(w.tokens.orgUser, 'GET', '/scripts?language=python')).body.data.map((s: { id: string }) => s.id)).toEqual([b.id]);
    expect((await as(w.tokens.orgUser, 'GET', '/scripts?search=GREET')).body.data.map((s: { id: string }) => s.id)).toEqual([a.id]);
    expect((await as(w.tokens.orgUser, 'GET', '/scripts?osType=windows')).body.data).toEqual([]);
    // Another partner's admin does not see it.
    expect((await as(w.tokens.bAdmin, 'GET', `/scripts/${a.id}`)).body.error).toBe('Script not found');
    expect((await as(w.tokens.bAdmin, 'GET', '/scripts')).body.data).toEqual([]);

    expect((await as(w.tokens.orgUser, 'DELETE', `/scripts/${b.id}`)).body).toEqual({ success: true });
    expect((await as(w.tokens.orgUser, 'GET', `/scripts/${b.id}`)).status).toBe(404);
  });

  it('05§4.7 the system library is read-only (403 System scripts are read-only), listed with includeSystem, imported as a copy', async () => {
    const library = await as(w.tokens.orgUser, 'GET', '/scripts/system-library');
    expect(library.status).toBe(200);
    expect(library.body.data.length).toBeGreaterThanOrEqual(4);
    const system = library.body.data.find((s: { name: string }) => s.name === 'Restart a Windows service');
    expect(system).toMatchObject({ isSystem: true, orgId: null });
    for (const res of [await put(w.tokens.orgUser, `/scripts/${system.id}`, { name: 'x' }), await as(w.tokens.orgUser, 'DELETE', `/scripts/${system.id}`)]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('System scripts are read-only');
    }
    expect((await as(w.tokens.orgUser, 'GET', '/scripts')).body.data).toEqual([]);
    expect((await as(w.tokens.orgUser, 'GET', '/scripts?includeSystem=true')).body.pagination.total).toBe(library.body.data.length);

    const copy = await as(w.tokens.orgUser, 'POST', `/scripts/import/${system.id}`, {});
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ orgId: w.orgA1.id, isSystem: false, name: system.name, content: system.content, parameters: system.parameters, version: 1 });
    expect(copy.body.id).not.toBe(system.id);
    expect((await put(w.tokens.orgUser, `/scripts/${copy.body.id}`, { name: 'Mine' })).status).toBe(200);
    expect((await as(w.tokens.orgUser, 'POST', `/scripts/import/${copy.body.id}`, {})).status).toBe(404);
  });

  it('05§4.7 scripts permissions: writes need scripts:write and MFA', async () => {
    const plain = await mintToken(t, w.users.orgUser.id, { mfa: false });
    const res = await as(plain, 'POST', '/scripts', SCRIPT);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('MFA_REQUIRED');
  });

  it('03§4.6 a run end to end with a simulated agent: {{var}} substituted, the secret only as SVC_VAR_ in the delivered command, masked in output, never stored', async () => {
    const script = await create();
    const linux = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'web-01', osType: 'linux' });
    const windows = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'win-01', osType: 'windows' });
    const elsewhere = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA2.id, { hostname: 'a2-01', osType: 'linux' });
    // The device custom field the parameter `who` reads, and the definitions the output marker may write.
    t.services.devices.mergeCustomFields(linux.deviceId, { owner: 'ops-team' });
    for (const field of [
      { key: 'lastGreeting', name: 'Last greeting', allowScriptWrite: true },
      { key: 'diskFree', name: 'Disk free', type: 'number', allowScriptWrite: true },
      { key: 'locked', name: 'Locked', allowScriptWrite: false },
    ]) {
      expect((await as(w.tokens.orgUser, 'POST', '/custom-fields', field)).status).toBe(201);
    }

    const run = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, {
      deviceIds: [linux.deviceId, windows.deviceId, elsewhere.deviceId],
      parameters: { apiToken: SECRET },
    });
    expect(run.status, run.text).toBe(201);
    expect(run.body).toMatchObject({ scriptId: script.id, devicesTargeted: 1, status: 'partial' });
    expect(run.body.executions).toEqual([{ executionId: expect.any(String), deviceId: linux.deviceId, commandId: expect.any(String) }]);
    expect(run.body.failures).toEqual([
      { deviceId: windows.deviceId, error: "Script does not support the device's OS (windows)" },
      { deviceId: elsewhere.deviceId, error: 'Device not found' },
    ]);
    const executionId = run.body.executions[0].executionId as string;
    expect(await execution(executionId)).toMatchObject({ status: 'pending', parameters: { greeting: 'hello', who: 'ops-team', apiToken: '[secret]' } });

    const [command] = await linux.fetch();
    expect(command).toMatchObject({ type: 'script', env: { SVC_VAR_APITOKEN: SECRET } });
    expect(command?.payload).toMatchObject({ executionId, scriptId: script.id, language: 'bash', timeoutSeconds: 120, runAs: 'system' });
    expect(command?.payload.content).toBe('echo "hello, ops-team"\ncurl -H "Authorization: $SVC_VAR_APITOKEN" http://example.invalid\n');
    expect(JSON.stringify(command?.payload)).not.toContain(SECRET);
    expect(await execution(executionId)).toMatchObject({ status: 'running', startedAt: expect.any(String) });
    expect(await linux.fetch()).toEqual([]);

    const stdout = [
      'hello, ops-team',
      `token was ${SECRET}`,
      '::svc:custom-fields::{"lastGreeting":"hello","diskFree":"lots","locked":true,"undefinedField":1}',
      '::svc:custom-fields::{"diskFree":42}',
    ].join('\n');
    expect((await linux.report(command?.id ?? '', { status: 'completed', exitCode: 0, stdout, stderr: `warn ${SECRET}` })).status).toBe(200);

    const done = await execution(executionId);
    expect(done).toMatchObject({
      status: 'completed',
      exitCode: 0,
      stderr: 'warn [REDACTED]',
      severity: null,
      customFieldsWritten: { lastGreeting: 'hello', diskFree: 42 },
      customFieldsRejected: ['locked', 'undefinedField'],
      completedAt: expect.any(String),
    });
    expect(done.stdout).toContain('token was [REDACTED]');
    const device = await as(w.tokens.orgUser, 'GET', `/devices/${linux.deviceId}`);
    expect(device.body.customFields).toEqual({ owner: 'ops-team', lastGreeting: 'hello', diskFree: 42 });

    const events = t.db.select().from(outboxEvents).where(eq(outboxEvents.orgId, w.orgA1.id)).all().map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(['script.started', 'script.completed']));
    const listed = await as(w.tokens.orgUser, 'GET', `/scripts/${script.id}/executions`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ id: executionId, scriptName: 'Greet', deviceId: linux.deviceId });

    expect(everyStoredRow(t)).not.toContain(SECRET);
  });

  it('03§4.6 exitCodeSeverityMapping: a non-zero exit fails the run with the mapped severity (script.failed)', async () => {
    const script = await create({ parameters: [], content: 'exit 2' });
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const run = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [agent.deviceId] });
    expect(run.body.status).toBe('queued');
    await agent.work(() => ({ status: 'completed', exitCode: 2, stdout: 'disk nearly full' }));
    expect(await execution(run.body.executions[0].executionId)).toMatchObject({ status: 'failed', exitCode: 2, severity: 'high' });
    const failed = t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'script.failed')).get();
    expect(failed?.payload).toMatchObject({ scriptId: script.id, exitCode: 2, severity: 'high' });
    // An unmapped code fails without a severity; an agent that could not run it fails too.
    const again = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [agent.deviceId] });
    await agent.work(() => ({ status: 'failed', error: 'bash not found' }));
    expect(await execution(again.body.executions[0].executionId)).toMatchObject({ status: 'failed', exitCode: null, severity: null, errorMessage: 'bash not found' });
  });

  it('05§4.7 execute: nothing dispatched is 422; unknown and missing required parameters are refused', async () => {
    const script = await create();
    const windows = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { osType: 'windows' });
    const none = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [windows.deviceId], parameters: { apiToken: SECRET } });
    expect(none.status).toBe(422);
    expect(none.body.error).toBe('No devices could be targeted');
    const linux = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const unknown = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [linux.deviceId], parameters: { nope: 1 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('Unknown parameter: nope');
    const missing = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [linux.deviceId] });
    expect(missing.status).toBe(422);
    expect(missing.body.failures).toEqual([{ deviceId: linux.deviceId, error: 'Missing required parameter: apiToken' }]);
    expect(t.db.select().from(scriptExecutions).all()).toEqual([]);
    expect((await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [] })).status).toBe(400);
  });

  it('05§4.7 cancel: a pending run is cancelled and never delivered; a finished one answers 400 Cannot cancel execution with status', async () => {
    const script = await create({ parameters: [], content: 'sleep 600' });
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const run = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [agent.deviceId] });
    const id = run.body.executions[0].executionId as string;
    const deleting = await as(w.tokens.orgUser, 'DELETE', `/scripts/${script.id}`);
    expect(deleting.status).toBe(409);
    expect(deleting.body.error).toBe('Cannot delete script with active executions');

    const cancelled = await as(w.tokens.orgUser, 'POST', `/scripts/executions/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ success: true, execution: { id, status: 'cancelled', completedAt: expect.any(String) } });
    expect(await agent.fetch()).toEqual([]);
    const again = await as(w.tokens.orgUser, 'POST', `/scripts/executions/${id}/cancel`);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('Cannot cancel execution with status: cancelled');

    // A running one can be cancelled too; the agent's late result is refused.
    const second = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [agent.deviceId] });
    const [command] = await agent.fetch();
    expect((await as(w.tokens.orgUser, 'POST', `/scripts/executions/${second.body.executions[0].executionId}/cancel`)).body.execution.status).toBe('cancelled');
    expect((await agent.report(command?.id ?? '', { status: 'completed', exitCode: 0 })).status).toBe(409);

    // With no run active the script can be deleted; its runs stay, under its name.
    expect((await as(w.tokens.orgUser, 'DELETE', `/scripts/${script.id}`)).status).toBe(200);
    expect(await execution(id)).toMatchObject({ scriptId: null, scriptName: 'Greet', status: 'cancelled' });
  });

  it('05§4.7 timeoutSeconds is enforced by a durable job from the moment the agent takes the command', async () => {
    const script = await create({ parameters: [], content: 'sleep 600', timeoutSeconds: 5 });
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const run = await as(w.tokens.orgUser, 'POST', `/scripts/${script.id}/execute`, { deviceIds: [agent.deviceId] });
    const id = run.body.executions[0].executionId as string;
    await t.worker.tick(new Date(Date.now() + 60_000));
    expect((await execution(id)).status).toBe('pending'); // not fetched yet: no clock runs
    const [command] = await agent.fetch();
    await t.worker.tick(new Date(Date.now() + 2_000));
    expect((await execution(id)).status).toBe('running');
    await t.worker.tick(new Date(Date.now() + 6_000));
    expect(await execution(id)).toMatchObject({ status: 'timeout', errorMessage: 'Timed out after 5 seconds', completedAt: expect.any(String) });
    const late = await agent.report(command?.id ?? '', { status: 'completed', exitCode: 0 });
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('Command is already timeout');
  });

  it('02§4.5 GET /search lists scripts (name, description or category) the caller may read, after devices and before alerts', async () => {
    await create({ name: 'Backup check', description: 'Checks the nightly backup' });
    const search = async (token: string, q: string) => (await as(token, 'GET', `/search?q=${encodeURIComponent(q)}`)).body.results as { type: string; title: string; description: string }[];
    const found = (await search(w.tokens.orgUser, 'backup')).filter((r) => r.type === 'scripts');
    expect(found).toEqual([expect.objectContaining({ type: 'scripts', title: 'Backup check', description: 'Checks the nightly backup' })]);
    expect((await search(w.tokens.orgUser, 'dns')).filter((r) => r.type === 'scripts').map((r) => r.title)).toEqual(['Flush DNS cache']);
    expect((await search(w.tokens.bAdmin, 'backup')).filter((r) => r.type === 'scripts')).toEqual([]);
  });
});

describe('secret variables never reach the log (03 §4.6)', () => {
  it('03§4.6 a run with a secret, logged at trace level, leaves no trace of the secret in the log', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-scripts-log-'));
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'trace' });
    const options = loggerOptions('trace');
    const built = await buildApp(config, { logger: options && typeof options === 'object' ? { ...options, stream } : options, announce: () => {} });
    const t = built as unknown as TestApp;
    t.call = async (method, url, o = {}) => {
      const res = await built.app.inject({ method, url, headers: o.token ? { authorization: `Bearer ${o.token}` } : {}, ...(o.body !== undefined ? { payload: o.body as object } : {}) });
      return { status: res.statusCode, headers: res.headers, body: res.body ? JSON.parse(res.body) : undefined, text: res.body };
    };
    try {
      const w = await seedWorld(t, { mfa: true });
      const token = await adminToken(t, { mfa: true });
      const agent = await SimulatedAgent.enroll(t, token, w.orgA1.id);
      const script = await t.call('POST', `${API}/scripts`, { token: w.tokens.orgUser, body: SCRIPT });
      const run = await t.call('POST', `${API}/scripts/${script.body.id}/execute`, { token: w.tokens.orgUser, body: { deviceIds: [agent.deviceId], parameters: { apiToken: SECRET } } });
      expect(run.status).toBe(201);
      await agent.work((c) => ({ status: 'completed', exitCode: 0, stdout: `env ${c.env.SVC_VAR_APITOKEN}` }));
      await built.worker.tick();
      expect(lines.length).toBeGreaterThan(5);
      expect(lines.join('')).not.toContain(SECRET);
    } finally {
      await built.app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
