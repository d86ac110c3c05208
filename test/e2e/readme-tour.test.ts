import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** The first ```sh block of a README section. */
function shellBlock(readme: string, heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`no section "${heading}" in the README`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end === -1 ? undefined : end);
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error(`no sh block in "${heading}"`);
  return block;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor<T>(what: string, read: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Issue 9 item 1: the README's "Set up" and "A quick tour", run as written, in that order, in one machine's
 * shell: set-up starts the server in the background, the tour signs in with the password set-up printed and
 * ends by stopping the server. What differs from a user's machine comes through the environment: HOME (so the
 * default data dir is a temp one), PORT and SVC_BASE_URL (a free port instead of 3000). `npm ci` is a no-op:
 * the suite runs on the package `npm test` built.
 */
describe('e2e: the README set-up and quick tour, in order', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-readme-'));
  const dataDir = path.join(home, '.local', 'share', 'svc');
  afterAll(() => {
    // A failed run may leave the server up: end it by the pid it recorded.
    try {
      const { pid } = JSON.parse(fs.readFileSync(path.join(dataDir, 'server.pid'), 'utf8')) as { pid: number };
      process.kill(pid, 'SIGKILL');
    } catch {
      // not running
    }
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('set-up leaves a running server and a printed password; the tour works with them and stops it', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const setup = shellBlock(readme, 'Set up');
    const tour = shellBlock(readme, 'A quick tour');
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      LANG: 'C.UTF-8',
      HOME: home,
      CI: '1',
      PORT: String(port),
      SVC_BASE_URL: `http://127.0.0.1:${port}`,
    };

    // Set-up, in a shell whose output (the terminal) goes to a file: the background server keeps writing there.
    const terminal = path.join(home, 'terminal.txt');
    const fd = fs.openSync(terminal, 'w');
    const shell = spawn('bash', ['-c', `npm() { :; }\n${setup}`], { cwd: ROOT, env, stdio: ['ignore', fd, fd] });
    const setupExit = await new Promise<number | null>((resolve) => shell.on('exit', resolve));
    fs.closeSync(fd);
    expect(setupExit).toBe(0);
    const printed = await waitFor('the listening line', () => {
      const text = fs.readFileSync(terminal, 'utf8');
      return /svc server listening on/.test(text) ? text : undefined;
    });
    expect(printed).toContain(`svc server listening on http://127.0.0.1:${port}`);
    expect(printed).toContain('admin@svc.localhost');
    const password = /password: (\S+)/.exec(printed)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);

    // The tour, with the printed password where it says to put it.
    expect(tour).toContain("'PASSWORD'");
    const result = await execa('bash', ['-eo', 'pipefail', '-c', tour.replace("'PASSWORD'", `'${password}'`)], {
      cwd: ROOT,
      env,
      extendEnv: false,
      reject: false,
      timeout: 120_000,
    });
    expect(result.stderr).not.toMatch(/Error/);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Contoso');
    expect(result.stdout).toContain('Acme MSP');
    expect(result.stderr).toMatch(/Stopped the server/);

    // The server has stopped and cleaned up; its request log went to the data dir, not to the terminal.
    expect(fs.existsSync(path.join(dataDir, 'server.pid'))).toBe(false);
    const terminalText = fs.readFileSync(terminal, 'utf8');
    expect(terminalText).not.toMatch(/"level":/);
    expect(terminalText).toContain('svc server stopped.');
    expect(fs.readFileSync(path.join(dataDir, 'server.log'), 'utf8')).toContain('/api/v1/auth/login');
    expect(fs.readFileSync(path.join(dataDir, 'server.log'), 'utf8')).not.toContain(password);
  }, 180_000);
});
