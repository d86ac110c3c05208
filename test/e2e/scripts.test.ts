import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, cliUser, E2E_TIMEOUT_MS, filesUnder, http, httpCaller, startServer, type CliUser, type E2eServer } from '../helpers/cli.js';
import { createTenant, ok, turnOnMfa } from '../helpers/fixtures.js';
import { SimulatedAgent, type AgentCommand, type AgentResult } from '../helpers/simulated-agent.js';

const SECRET = 'e2e-Zq81-secret-token-value';
const SCRIPT = {
  name: 'Report token',
  osTypes: ['linux'],
  language: 'bash',
  content: 'echo "hello {{var.who}}"\necho "token=$SVC_VAR_APITOKEN"\n',
  parameters: [
    { name: 'who', type: 'string', defaultValue: 'ops' },
    { name: 'apiToken', type: 'string', secret: true, required: true },
  ],
  timeoutSeconds: 120,
};

/** The agent's loop: polls its commands (bounded: 150 × 100 ms) until one arrives, runs it with `run`, reports. */
async function agentRuns(agent: SimulatedAgent, run: (command: AgentCommand) => AgentResult): Promise<AgentCommand[]> {
  for (let i = 0; i < 150; i++) {
    const done = await agent.work(run);
    if (done.length > 0) return done;
    await sleep(100);
  }
  throw new Error('the agent received no command in 15 s');
}

/** What a real agent does with a script command: it "runs" the content, the secret read from the environment. */
function execute(exitCode: number) {
  return (command: AgentCommand): AgentResult => {
    const token = command.env.SVC_VAR_APITOKEN ?? '';
    const stdout = `hello ops\ntoken=${token}\n`;
    return exitCode === 0 ? { status: 'completed', exitCode, stdout } : { status: 'failed', exitCode, stdout, stderr: `boom ${token}` };
  };
}

describe('e2e: svc scripts run --wait with a simulated agent (03 §4.6, 05 wire notes "4.7", CLI.md exit codes)', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let token = '';
  let cli: CliUser;
  let orgId = '';
  let bodyFile = '';

  beforeAll(async () => {
    server = await startServer();
    token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
    cli = cliUser({ SVC_TOKEN: token, SVC_BASE_URL: server.url });
    orgId = (await createTenant(server.url, token, 'scripts')).orgId;
    // The secret reaches the CLI from a file, never from argv (CLI.md).
    bodyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-scripts-')), 'run.json');
    fs.writeFileSync(bodyFile, JSON.stringify({ parameters: { apiToken: SECRET } }));
  }, E2E_TIMEOUT_MS);
  afterAll(async () => {
    cli.cleanup();
    fs.rmSync(path.dirname(bodyFile), { recursive: true, force: true });
    await server.stop();
  });

  async function setUp(hosts: string[]) {
    const script = await ok<{ id: string }>(http(server.url, 'POST', '/scripts', { token, body: { ...SCRIPT, orgId } }), 'create script');
    const agents: SimulatedAgent[] = [];
    for (const hostname of hosts) agents.push(await SimulatedAgent.enroll(httpCaller(server.url), token, orgId, { hostname, osType: 'linux' }));
    return { script, agents };
  }

  /** Nothing the server stored (database, WAL, logs) holds the secret in plain text. */
  function expectNotStored(): void {
    for (const file of filesUnder(server.dataDir)) expect(fs.readFileSync(file).includes(SECRET), file).toBe(false);
  }

  it('03§4.6 --wait prints every device\'s result and exits 0 when all succeeded; the secret reaches the agent only as SVC_VAR_APITOKEN and never the output', async () => {
    const { script, agents } = await setUp(['e2e-ok-1', 'e2e-ok-2']);
    const running = cli.run(['scripts', 'run', script.id, ...agents.flatMap((a) => ['--device', a.deviceId]), '--from-file', bodyFile, '--wait', '--poll-seconds', '1', '-o', 'json']);
    const delivered = await Promise.all(agents.map((a) => agentRuns(a, execute(0))));
    const result = await running;
    expect(result.exitCode, result.stderr).toBe(0);
    for (const [command] of delivered) {
      expect(command?.env).toEqual({ SVC_VAR_APITOKEN: SECRET });
      expect(JSON.stringify(command?.payload)).not.toContain(SECRET);
    }
    const runs = JSON.parse(result.stdout) as { deviceId: string; status: string; exitCode: number; stdout: string; parameters: Record<string, unknown> }[];
    expect(runs.map((r) => r.deviceId).sort()).toEqual(agents.map((a) => a.deviceId).sort());
    for (const run of runs) {
      expect(run).toMatchObject({ status: 'completed', exitCode: 0, parameters: { who: 'ops', apiToken: '[secret]' } });
      expect(run.stdout).toContain('hello ops');
    }
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expectNotStored();
  });

  it('03§4.6 --wait exits 9 (CLI.md: incomplete) when any device\'s run failed, after printing every run; the secret in stdout and stderr is masked', async () => {
    const { script, agents } = await setUp(['e2e-good', 'e2e-bad']);
    const [good, bad] = agents as [SimulatedAgent, SimulatedAgent];
    const running = cli.run(['scripts', 'run', script.id, '--device', good.deviceId, '--device', bad.deviceId, '--from-file', bodyFile, '--wait', '--poll-seconds', '1', '-o', 'json']);
    await Promise.all([agentRuns(good, execute(0)), agentRuns(bad, execute(3))]);
    const result = await running;
    expect(result.exitCode).toBe(9);
    expect(result.stderr).toContain('1 of 2 device run(s) did not succeed');
    const runs = JSON.parse(result.stdout) as { deviceId: string; status: string; exitCode: number; stderr: string | null }[];
    expect(Object.fromEntries(runs.map((r) => [r.deviceId, [r.status, r.exitCode]]))).toEqual({ [good.deviceId]: ['completed', 0], [bad.deviceId]: ['failed', 3] });
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expectNotStored();
  });

  it('03§4.6 without --wait the batch is printed and the CLI does not wait (exit 0)', async () => {
    const { script, agents } = await setUp(['e2e-nowait']);
    const [agent] = agents as [SimulatedAgent];
    const batch = await cli.json(['scripts', 'run', script.id, '--device', agent.deviceId, '--from-file', bodyFile]);
    expect(batch).toMatchObject({ scriptId: script.id, devicesTargeted: 1, executions: [{ deviceId: agent.deviceId }] });
    expect(JSON.stringify(batch)).not.toContain(SECRET);
  });
});
