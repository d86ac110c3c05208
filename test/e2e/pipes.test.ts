import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliUser, type CliUser, E2E_TIMEOUT_MS, http as request, login, ROOT } from '../helpers/cli.js';
import { signedInServer } from '../helpers/fixtures.js';

/** A loopback server that answers every request with `respond` (a web server at a wrong URL, a limit, a hang). */
async function fakeServer(respond: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const sockets = new Set<Socket>();
  const server = http.createServer(respond);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let requests = 0;
  server.on('request', () => (requests += 1));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Spawned {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

type Child = ReturnType<typeof spawn>;

/**
 * Runs a command with piped stdio and acts on what it prints: `stdout` may close the pipe (a `| head -1`),
 * `stderr` type at a prompt. The child inherits nothing but PATH and the given env.
 */
function spawnSvc(
  command: string,
  args: readonly string[],
  env: Record<string, string>,
  on: { stdout?: (text: string, child: Child) => void; started?: (child: Child) => void } = {},
): Promise<Spawned> {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...env }, stdio: ['pipe', 'pipe', 'pipe'], cwd: ROOT });
  on.started?.(child);
  // The child may be gone before a write to its stdin lands.
  child.stdin.on('error', () => undefined);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    on.stdout?.(stdout, child);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    }),
  );
}

/** A command on a pseudo-terminal (util-linux `script`), as a person at a terminal runs it; output is stdout and
 * stderr together. */
function onTerminal(user: CliUser, args: readonly string[], on: Parameters<typeof spawnSvc>[3] = {}) {
  const quoted = ['node', BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const env = { HOME: user.home, XDG_CONFIG_HOME: user.configDir, TERM: 'dumb', COLUMNS: '200' };
  return spawnSvc('script', ['-qec', quoted, '/dev/null'], env, on);
}

describe('e2e: the CLI in pipes and scripts (issue 9, CLI.md "Errors and exit codes", "Retries", "Output")', { timeout: E2E_TIMEOUT_MS }, () => {
  const shared = signedInServer();
  let tokenEnv: Record<string, string>;
  const others: CliUser[] = [];
  const fresh = () => {
    const one = cliUser();
    others.push(one);
    return one;
  };

  beforeAll(async () => {
    const { token } = shared;
    tokenEnv = { SVC_TOKEN: token, SVC_BASE_URL: shared.url, HOME: shared.user.home, CI: '1' };
    // More partners than one page holds, and one whose name a spreadsheet would run.
    await Promise.all(Array.from({ length: 12 }, (_, i) => request(shared.url, 'POST', '/orgs/partners', { token, body: { name: `Pipe ${i}`, slug: `pipe-${i}` } })));
    await request(shared.url, 'POST', '/orgs/partners', { token, body: { name: '=HYPERLINK("http://evil.example","x")', slug: 'formula' } });
  });
  afterAll(() => {
    for (const one of others) one.cleanup();
  });

  const closeAfterFirstLine = (text: string, child: ReturnType<typeof spawn>) => {
    if (text.includes('\n')) child.stdout?.destroy();
  };

  it.concurrent.each([
    ['partners list --all -o jsonl', ['partners', 'list', '--all', '--limit', '1', '-o', 'jsonl']],
    ['partners list --all -o csv', ['partners', 'list', '--all', '--limit', '1', '-o', 'csv']],
    ['api --paginate', ['api', '/orgs/partners', '--paginate', '-f', 'limit=1', '-o', 'jsonl']],
  ])('issue 9 item 5: `svc %s | head -1` ends quietly with exit 0 when the reader closes', async (_name, args) => {
    const result = await spawnSvc('node', [BIN, ...args], tokenEnv, { stdout: closeAfterFirstLine });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBeGreaterThan(0);
  });

  it.concurrent('issue 9 item 6 (CLI.md exit codes): Ctrl-C while a request waits on the server is exit 130, with no message', async () => {
    let child: Child | undefined;
    // The request has arrived: now the user presses Ctrl-C.
    const hung = await fakeServer(() => child?.kill('SIGINT'));
    try {
      const result = await spawnSvc('node', [BIN, 'partners', 'list'], { SVC_TOKEN: 'x', SVC_BASE_URL: hung.url, CI: '1' }, { started: (c) => (child = c) });
      expect(result.stderr).toBe('');
      expect(result.exitCode).toBe(130);
    } finally {
      await hung.close();
    }
  });

  it.concurrent('issue 9 item 6: Ctrl-C at a prompt is exit 130 without "User force closed the prompt"', async () => {
    let pressed = false;
    const result = await onTerminal(fresh(), ['login', '--base-url', shared.url], {
      stdout: (text, child) => {
        if (pressed || !text.includes('Email')) return;
        pressed = true;
        child.stdin?.write('\u0003');
      },
    });
    expect(result.stdout).not.toContain('force closed');
    expect(result.stdout).not.toContain('Error');
    expect(result.exitCode).toBe(130);
  });

  it.concurrent('issue 9 item 7: a 200 that is not JSON (a web server at the base URL) is exit 8 naming the URL and content type', async () => {
    const web = await fakeServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>welcome</html>'));
    try {
      const result = await fresh().run(['partners', 'list', '--base-url', web.url], { env: { SVC_TOKEN: 'x' } });
      expect(result.exitCode).toBe(8);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`unexpected response from ${web.url}/api/v1/orgs/partners`);
      expect(result.stderr).toContain('content-type text/html');
    } finally {
      await web.close();
    }
  });

  it.concurrent('issue 9 item 7: --base-url …/api/v1 is understood as the deployment', async () => {
    const result = await shared.user.run(['partners', 'list', '--base-url', `${shared.url}/api/v1`, '-o', 'json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).length).toBeGreaterThan(0);
  });

  it.concurrent('issue 9 item 8: integer fields take decimal digits only; an empty value is an error naming the flag', async () => {
    for (const value of ['', '0x10', '1e3', ' 7']) {
      const result = await shared.user.run(['partners', 'create', '--name', 'Int', '--slug', 'int-x', '--max-devices', value, '--dry-run']);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('--max-devices');
    }
    const ok = await shared.user.run(['partners', 'create', '--name', 'Int', '--slug', 'int-x', '--max-devices', '7', '--dry-run', '-o', 'json']);
    expect(JSON.parse(ok.stdout).body.maxDevices).toBe(7);
  });

  it.concurrent('issue 9 item 9: a field the contract requires is checked before sending and named as its flag', async () => {
    const missing = await shared.user.run(['partners', 'create', '--name', 'No slug']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('Missing required flag --slug');
    expect(missing.stderr).not.toContain('slug: Invalid input');
    const file = path.join(shared.user.home, 'partner.yaml');
    fs.writeFileSync(file, 'slug: from-file\n');
    const merged = await shared.user.run(['partners', 'create', '--name', 'From file', '--from-file', file, '-o', 'json']);
    expect(merged.exitCode).toBe(0);
    expect(JSON.parse(merged.stdout).slug).toBe('from-file');
    const help = await shared.user.run(['partners', 'create', '--help']);
    expect(help.stdout).toMatch(/--slug=<value>\s+.*Required unless given by\s+--from-file/s);
  });

  it.concurrent('issue 9 item 10: malformed --from-file, --base-url not-a-url and ftp:// are usage errors (exit 2) naming the file or flag', async () => {
    const file = path.join(shared.user.home, 'broken.json');
    fs.writeFileSync(file, '{"name": "x",');
    const broken = await shared.user.run(['partners', 'create', '--from-file', file]);
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain(file);
    for (const url of ['not-a-url', 'ftp://files.example.com']) {
      const result = await fresh().run(['partners', 'list', '--base-url', url]);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('--base-url');
    }
  });

  it.concurrent('issue 9 item 11 (03§4.4): -o csv neutralises a formula cell as the server\'s export does', async () => {
    const result = await shared.user.run(['partners', 'list', '--all', '-o', 'csv', '--columns', 'slug,name']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`formula,"'=HYPERLINK(""http://evil.example"",""x"")"`);
  });

  it.concurrent('issue 9 item 12: a Retry-After beyond the retry budget fails at once (exit 7) and says when to try again', async () => {
    const limited = await fakeServer((_req, res) =>
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3475' }).end('{"error":"Too many requests","code":"RATE_LIMITED"}'),
    );
    try {
      const result = await fresh().run(['partners', 'list', '--base-url', limited.url, '-o', 'json'], { env: { SVC_TOKEN: 'x' } });
      expect(result.exitCode).toBe(7);
      expect(limited.requests()).toBe(1);
      expect(result.stderr).toContain('Try again in 58 min');
      expect(result.stderr).toContain('"retryAfterSeconds":3475');
    } finally {
      await limited.close();
    }
  });

  it.concurrent('issue 9 item 12: each retry is announced with --debug; a login 429 passes its Retry-After on', async () => {
    let calls = 0;
    const flaky = await fakeServer((req, res) => {
      calls += 1;
      if (req.url?.startsWith('/api/v1/auth/login')) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '300' }).end('{"error":"Too many login attempts"}');
        return;
      }
      if (calls < 3) res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"error":"busy"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"pagination":{"page":1,"limit":50,"total":0}}');
    });
    try {
      const listed = await fresh().run(['partners', 'list', '--base-url', flaky.url, '--debug', '-o', 'json'], { env: { SVC_TOKEN: 'x' } });
      expect(listed.exitCode).toBe(0);
      expect(listed.stderr).toContain('GET /api/v1/orgs/partners?page=1&limit=50: HTTP 503; try 2 of 3');
      expect(listed.stderr).toContain('try 3 of 3');
      const quiet = await fresh().run(['partners', 'list', '--base-url', flaky.url, '-o', 'json'], { env: { SVC_TOKEN: 'x' } });
      expect(quiet.stderr).toBe('');
      const signIn = await login(fresh(), flaky.url);
      expect(signIn.exitCode).toBe(7);
      expect(signIn.stderr).toContain('Try again in 5 min');
      expect(signIn.stderr).not.toContain('svc login');
    } finally {
      await flaky.close();
    }
  });

  it.concurrent('issue 9 item 12: --timeout bounds each try, and the error reports the tries and the time they took', async () => {
    const hung = await fakeServer(() => undefined);
    try {
      const result = await fresh().run(['partners', 'list', '--base-url', hung.url, '--timeout', '1', '--retries', '2'], { env: { SVC_TOKEN: 'x' } });
      expect(result.exitCode).toBe(8);
      expect(result.stderr).toMatch(/No answer within 1000 ms for the response headers.*; 2 tries in \d+\.\d s/);
    } finally {
      await hung.close();
    }
  });

  it.concurrent('issue 9 item 13: on a terminal a list cut at the page size says so on stderr', async () => {
    const result = await onTerminal(shared.user, ['partners', 'list', '--limit', '5']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/showing 5 of \d+; --all for every page/);
    const offTerminal = await shared.user.run(['partners', 'list', '--limit', '5']);
    expect(offTerminal.stderr).toBe('');
  });

  it.concurrent('issue 9 item 13: --columns with a field no row has is exit 2 naming the valid columns', async () => {
    const result = await shared.user.run(['partners', 'list', '--columns', 'id,nosuch']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Unknown column "nosuch"');
    expect(result.stderr).toMatch(/valid columns: id, name, slug/);
  });

  it.concurrent('issue 9 item 14: hints follow where the credentials come from', async () => {
    const badToken = await fresh().run(['partners', 'list', '--base-url', shared.url], { env: { SVC_TOKEN: 'not-a-token' } });
    expect(badToken.exitCode).toBe(3);
    expect(badToken.stderr).toContain('SVC_TOKEN');
    expect(badToken.stderr).not.toContain('svc login');
    const badKey = await fresh().run(['partners', 'list', '--base-url', shared.url], { env: { SVC_API_KEY: 'svc_nope' } });
    expect(badKey.stderr).toContain('SVC_API_KEY');
    expect(badKey.stderr).not.toContain('svc login');
    const wrongPassword = await login(fresh(), shared.url, { email: 'admin@e2e.test', password: 'wrong-password' });
    expect(wrongPassword.exitCode).toBe(3);
    expect(wrongPassword.stderr).not.toContain('svc login');

    const staging = fresh();
    expect((await login(staging, shared.url, undefined, ['--profile', 'staging'])).exitCode).toBe(0);
    expect((await staging.run(['logout', '-p', 'staging'])).exitCode).toBe(0);
    const after = await staging.run(['partners', 'list', '-p', 'staging']);
    expect(after.exitCode).toBe(3);
    expect(after.stderr).toContain('svc login --profile staging');
  });

  it.concurrent('issue 9 item 14: a fresh user with no profile is told it is not logged in, not ECONNREFUSED', async () => {
    const result = await fresh().run(['partners', 'list']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('Not logged in');
    expect(result.stderr).not.toContain('ECONNREFUSED');
    expect(result.stderr).toContain('svc login');
  });

  it.concurrent('issue 9 item 14: whoami with SVC_API_KEY names no profile', async () => {
    const keyed = await fakeServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"o1","name":"Org"}]}'));
    try {
      const result = await fresh().run(['whoami', '-o', 'json'], { env: { SVC_API_KEY: 'svc_key', SVC_BASE_URL: keyed.url } });
      expect(result.exitCode).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ profile: null, credentials: 'environment (SVC_API_KEY)' });
    } finally {
      await keyed.close();
    }
  });

  it.concurrent('issue 9 item 14 (CLI.md exit codes): the JSON error on stderr carries the HTTP status of a 403', async () => {
    const forbidden = await fakeServer((_req, res) => res.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"Permission denied","code":"FORBIDDEN"}'));
    try {
      const result = await fresh().run(['orgs', 'list', '--base-url', forbidden.url, '-o', 'json'], { env: { SVC_TOKEN: 'x' } });
      expect(result.exitCode).toBe(4);
      const json = result.stderr.split('\n').find((line) => line.startsWith('{'));
      expect(JSON.parse(json ?? '{}')).toMatchObject({ error: { status: 403, code: 'FORBIDDEN' } });
    } finally {
      await forbidden.close();
    }
  });

  it.concurrent('issue 9 item 15: output flags a command cannot honour are neither offered nor accepted; -h is --help', async () => {
    for (const args of [
      ['server', 'start', '--columns', 'x'],
      ['server', 'start', '-o', 'json'],
      ['logout', '--no-headers'],
      ['pam', 'export', '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-02T00:00:00Z', '--columns', 'x'],
    ]) {
      const result = await shared.user.run(args);
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain('Nonexistent flag');
    }
    const help = await shared.user.run(['server', 'start', '--help']);
    expect(help.stdout).not.toContain('--columns');
    expect(help.stdout).not.toContain('--output');
    const short = await shared.user.run(['orgs', 'list', '-h']);
    expect(short.exitCode).toBe(0);
    expect(short.stdout).toBe((await shared.user.run(['orgs', 'list', '--help'])).stdout);
    expect((await shared.user.run(['orgs', '-h'])).stdout).toBe((await shared.user.run(['orgs', '--help'])).stdout);
  });
});
