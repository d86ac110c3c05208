import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server/server.js';
import { listeningUrl } from '../helpers/cli.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/run.js');

/** GET over a fresh connection (no keep-alive pool), resolving with status and body. */
function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

/** Whether a new TCP connection to the port is refused right now. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** In-process start options: no logger, no signal handlers, nothing announced. */
const QUIET = { logger: false, handleSignals: false, announce: () => {} };

/** QUIET, with a GET route added before the server listens. */
function withRoute(url: string, handler: () => Promise<unknown>): StartOptions {
  return { ...QUIET, beforeListen: (app) => void app.get(url, handler) };
}

/** A promise and the function that resolves it. */
function deferred(): [Promise<void>, () => void] {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return [promise, resolve];
}

describe('graceful shutdown', () => {
  let dataDir: string;
  let server: RunningServer | undefined;

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-shutdown-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  /** A server on this test's data dir and any free port, silent; `extra` adds or overrides settings. */
  const configFor = (extra: Record<string, string> = {}) =>
    loadConfig({ SVC_DATA_DIR: dataDir, PORT: '0', SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!', SVC_LOG_LEVEL: 'silent', ...extra });

  it('stops accepting, finishes the in-flight request, then closes the database and releases the pid file', async () => {
    const config = configFor({ SVC_ADMIN_EMAIL: 'admin@example.test' });
    const [handlerEntered, entered] = deferred();
    const [gate, finish] = deferred();

    const running = await startServer(
      config,
      withRoute('/test/slow', async () => {
        entered();
        await gate;
        // The database is still open while a request is in flight.
        const row = running.db.$client.prepare('SELECT count(*) AS n FROM users').get() as { n: number };
        return { users: row.n };
      }),
    );
    server = running;
    const port = Number(new URL(running.address).port);
    // The pid file records the pid, the URL and the data dir (`svc server status` and `stop` read them).
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'server.pid'), 'utf8'))).toMatchObject({
      pid: process.pid,
      command: 'start',
      url: running.address,
      dataDir,
    });

    const inFlight = get(`${running.address}/test/slow`);
    await handlerEntered;

    let closed = false;
    const closing = running.close().then(() => (closed = true));

    // New connections are refused while the in-flight request is still running.
    let isRefused = false;
    for (let i = 0; i < 50 && !isRefused; i++) {
      isRefused = await refused(port);
      if (!isRefused) await new Promise((r) => setTimeout(r, 20));
    }
    expect(isRefused).toBe(true);
    expect(closed).toBe(false);
    expect(running.db.$client.open).toBe(true);

    finish();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ users: 1 });

    await closing;
    expect(running.db.$client.open).toBe(false);
    expect(fs.existsSync(path.join(dataDir, 'server.pid'))).toBe(false);
    // A second close is harmless.
    await running.close();
  });

  it('cuts off a request still running after SVC_SHUTDOWN_TIMEOUT_MS, and still closes the database', async () => {
    const config = configFor({ SVC_SHUTDOWN_TIMEOUT_MS: '200' });
    const [handlerEntered, entered] = deferred();
    const running = await startServer(
      config,
      withRoute('/test/stuck', async () => {
        entered();
        await new Promise(() => {});
      }),
    );
    server = running;
    const stuck = get(`${running.address}/test/stuck`).then(
      () => 'answered',
      () => 'cut off',
    );
    await handlerEntered;
    const started = Date.now();
    await running.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(await stuck).toBe('cut off');
    expect(running.db.$client.open).toBe(false);
  });

  it('a second server on the same data dir is refused while the first runs, and allowed after', async () => {
    const config = configFor();
    server = await startServer(config, QUIET);
    await expect(startServer(config, QUIET)).rejects.toMatchObject({ code: 'SERVER_RUNNING', exitCode: 6 });
    await server.close();
    server = await startServer(config, QUIET);
    expect((await get(`${server.address}/health`)).status).toBe(200);
  });

  it('issue 9 item 18: a request that arrives after the bind, while the app is still being built, is answered', async () => {
    let early: Promise<{ status: number }> | undefined;
    server = await startServer(configFor(), {
      ...QUIET,
      // The socket is bound and the pid file names its URL, but Fastify has not taken the socket yet.
      beforeListen: async () => {
        const { url } = JSON.parse(fs.readFileSync(path.join(dataDir, 'server.pid'), 'utf8')) as { url: string };
        const request = get(`${url}/health`);
        // Let the kernel and the bound socket accept the connection before Fastify takes the socket over.
        await new Promise((resolve) => setTimeout(resolve, 200));
        // A connection left with nobody to answer it never settles: give up after 5 s (status 0).
        early = Promise.race([request, new Promise<{ status: number }>((resolve) => setTimeout(() => resolve({ status: 0 }), 5000))]);
      },
    });
    expect(early).toBeDefined();
    expect((await early)?.status).toBe(200);
  });

  it('a stale pid file (dead process) does not block a start', async () => {
    fs.writeFileSync(path.join(dataDir, 'server.pid'), '999999\n');
    server = await startServer(configFor(), QUIET);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'server.pid'), 'utf8')).pid).toBe(process.pid);
  });

  it('`svc server start` exits 0 on SIGTERM, leaving no pid file and a cleanly closed database', async () => {
    const child = execa('node', [BIN, 'server', 'start', '--port', '0'], {
      env: {
        SVC_DATA_DIR: dataDir,
        SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
        SVC_LOG_LEVEL: 'warn',
        HOME: dataDir,
        XDG_CONFIG_HOME: dataDir,
      },
      extendEnv: false,
      reject: false,
      timeout: 20_000,
    });
    const address = await listeningUrl(child);
    expect((await get(`${address}/health`)).status).toBe(200);
    expect(fs.existsSync(path.join(dataDir, 'server.pid'))).toBe(true);
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'server.pid'))).toBe(false);
    // The last connection to close folds the WAL back in and deletes it: the database was closed, not dropped.
    expect(fs.existsSync(path.join(dataDir, 'svc.db-wal'))).toBe(false);
  }, 60_000);
});
