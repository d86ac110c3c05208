import type { FastifyInstance, FastifyListenOptions } from 'fastify';
import { buildApp, type BuildOptions } from './app.js';
import type { ServerConfig } from './config.js';
import type { Db } from './db/connection.js';
import type { JobWorker } from './jobs/queue.js';
import { loggerOptions, openLogDestination, type LogDestination } from './logging.js';
import { applyServerMemorySettings } from './memory.js';
import { ensureSystemAdmin } from './modules/identity/first-start.js';
import { bindSocket, type BoundSocket } from './ops/address.js';
import { acquireServerLock, runningServer, ServerRunningError, type ServerLock } from './ops/lock.js';

export interface StartOptions extends BuildOptions {
  /** Exit on SIGINT/SIGTERM after a graceful close (default true; tests pass false). */
  handleSignals?: boolean;
  /** Hold `<dataDir>/server.pid` while running (default true). */
  lock?: boolean;
  /** Called after the app is built and before it serves: tests register extra routes here. */
  beforeListen?: (app: FastifyInstance) => void | Promise<void>;
}

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  worker: JobWorker;
  /** Where a client on this machine reaches the server (loopback when it listens on a wildcard address). */
  address: string;
  /** The address and port the socket is bound to. */
  listen: { host: string; port: number };
  /** The request log's file, or null when it goes to stderr or nowhere. */
  logFile: string | null;
  /** Stops accepting, lets in-flight requests finish, stops the worker, closes the database and releases
   * the pid file. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Process concerns, in the order that leaves nothing behind when a start fails: refuse while another server
 * holds the data dir; bind the socket (a port in use or a bad address fails here, before any file is
 * written); take the pid file, recording the URL; build the app (keys checked against the database,
 * migrations); create the administrator on first start and print its one-time password; then serve, start
 * the worker, and shut down gracefully on SIGINT/SIGTERM.
 */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const announce = options.announce ?? ((message: string) => process.stderr.write(`${message}\n`));
  applyServerMemorySettings();
  if (options.lock !== false) {
    const holder = runningServer(config.dataDir);
    if (holder) throw new ServerRunningError(config.dataDir, holder.pid, holder.command);
  }
  const socket: BoundSocket = await bindSocket(config.host, config.port);
  // With port 0 the system picked one: links in mail and SSO callbacks must carry the port actually served.
  if (config.port !== socket.port) config = { ...config, port: socket.port };

  let lock: ServerLock | undefined;
  let log: LogDestination | undefined;
  let built: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    lock = options.lock === false ? undefined : acquireServerLock(config.dataDir, { command: 'start', url: socket.url });
    let logger = options.logger;
    if (logger === undefined) {
      const settings = loggerOptions(config.logLevel);
      if (typeof settings === 'object') {
        log = openLogDestination(config.logFile);
        logger = { ...settings, stream: log.stream };
      } else {
        logger = false;
      }
    }
    built = await buildApp(config, { ...options, logger, firstStart: false });
    await ensureSystemAdmin(built.db, config, announce);
    await options.beforeListen?.(built.app);
    // The host is the bound address, never `localhost`: for that name Fastify binds more sockets itself.
    const listenOptions = { handle: socket.takeHandle(), host: socket.address } as FastifyListenOptions;
    await built.app.listen(listenOptions);
    socket.handOverEarlyConnections(built.app.server);
  } catch (err) {
    await built?.app.close().catch(() => undefined);
    socket.close();
    lock?.release();
    log?.close();
    throw err;
  }
  const { app, db, worker } = built;
  worker.start();
  app.log.info({ url: socket.url, dataDir: config.dataDir }, 'server started');

  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  const onSignal = (signal: NodeJS.Signals) => {
    announce(`svc server stopping (${signal}): finishing the requests in flight…`);
    app.log.info({ signal }, 'shutting down');
    void close().then(
      () => {
        announce('svc server stopped.');
        process.exit(0);
      },
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        announce(`svc server: shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      },
    );
  };

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      for (const signal of signals) process.removeListener(signal, onSignal);
      const timer = setTimeout(() => {
        // Requests still running after SVC_SHUTDOWN_TIMEOUT_MS are cut off. The process exits when it owns
        // the signals; embedded (tests), the close then completes without them.
        app.log.error('shutdown timed out; closing the remaining connections');
        app.server.closeAllConnections();
        if (options.handleSignals !== false) {
          announce(`svc server: requests still running after ${config.shutdownTimeoutMs} ms were cut off.`);
          lock?.release();
          log?.close();
          process.exit(1);
        }
      }, config.shutdownTimeoutMs);
      timer.unref();
      try {
        // Fastify stops accepting connections, answers 503 on kept-alive ones, waits for in-flight requests,
        // then runs the onClose hooks: the worker stops and the database closes (app.ts).
        await app.close();
      } finally {
        clearTimeout(timer);
        lock?.release();
        log?.close();
      }
    })());

  if (options.handleSignals !== false) for (const signal of signals) process.once(signal, onSignal);
  return {
    app,
    db,
    worker,
    address: socket.url,
    listen: { host: socket.address, port: socket.port },
    logFile: log?.file ?? null,
    close,
  };
}
