import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, E2E_TIMEOUT_MS, listeningUrl } from '../helpers/cli.js';

/** Issue 9 item 17: `svc server status` finds the server where it listens, and `svc server stop` stops it. */
describe('e2e: svc server status and stop', { timeout: E2E_TIMEOUT_MS }, () => {
  let root: string;
  const env = () => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: root,
    XDG_CONFIG_HOME: path.join(root, 'config'),
    SVC_DATA_DIR: path.join(root, 'data'),
    SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
  });
  const svc = (args: string[]) =>
    execa('node', [BIN, 'server', ...args], { env: env(), extendEnv: false, reject: false, timeout: 30_000 });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('status probes the URL recorded in the pid file; stop ends the server gracefully (exit 0), then exits 5', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-stop-'));
    const child = execa('node', [BIN, 'server', 'start', '--port', '0'], {
      env: env(),
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    const url = await listeningUrl(child);

    // No --port: the server listens on a random one, and status still finds it.
    const status = await svc(['status', '-o', 'json']);
    expect(status.exitCode).toBe(0);
    expect(JSON.parse(status.stdout).server).toMatchObject({ url, reachable: true, pid: child.pid });

    const stop = await svc(['stop', '-o', 'json']);
    expect(stop.exitCode).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({ pid: child.pid, url });
    // stop returned once the server had exited: by then it had closed everything and removed its pid file.
    expect(fs.existsSync(path.join(root, 'data', 'server.pid'))).toBe(false);
    const server = await child;
    expect(server.exitCode).toBe(0);
    expect(server.stderr).toContain('svc server stopped.');

    const again = await svc(['stop', '-o', 'json']);
    expect(again.exitCode).toBe(5);
    expect(again.stderr).toContain('"code":"SERVER_NOT_RUNNING"');
  });

  it('a stale pid file (a dead process) is removed, with exit 5', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-stop-'));
    fs.mkdirSync(path.join(root, 'data'));
    fs.writeFileSync(path.join(root, 'data', 'server.pid'), JSON.stringify({ pid: 999_999, command: 'start' }));
    const stop = await svc(['stop', '-o', 'json']);
    expect(stop.exitCode).toBe(5);
    expect(stop.stderr).toContain('"code":"SERVER_NOT_RUNNING"');
    expect(fs.existsSync(path.join(root, 'data', 'server.pid'))).toBe(false);
  });
});
