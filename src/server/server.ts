import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from './app.js';
import type { ServerConfig } from './config.js';
import type { Db } from './db/connection.js';
import type { JobWorker } from './jobs/queue.js';
import { acquireServerLock, type ServerLock } from './ops/lock.js';

export interface StartOptions extends BuildOptions {
  /** Exit on SIGINT/SIGTERM after a graceful close (default true; tests pass false). */
  handleSignals?: boolean;
  /** Hold `<dataDir>/server.pid` while running (default true). */
  lock?: boolean;
  /** Called after the app is built and before it listens: tests register extra routes here. */
  beforeListen?: (app: FastifyInstance) => void | Promise<void>;
}

export interface RunningServer {
  app: FastifyInstance;
  db: Db;
  worker: JobWorker;
  address: string;
  /** Stops accepting, lets in-flight requests finish, stops the worker, closes the database and releases
   * the pid file. Safe to call twice. */
  close(): Promise<void>;
}

/** Process concerns: the data dir's pid file, listen, start the worker, and shut down gracefully on
 * SIGINT/SIGTERM. */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const lock: ServerLock | undefined = options.lock === false ? undefined : acquireServerLock(config.dataDir);
  let built: Awaited<ReturnType<typeof buildApp>> | undefined;
  let address: string;
  try {
    built = await buildApp(config, options);
    await options.beforeListen?.(built.app);
    address = await built.app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await built?.app.close().catch(() => undefined);
    lock?.release();
    throw err;
  }
  const { app, db, worker } = built;
  worker.start();

  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
  const onSignal = (signal: NodeJS.Signals) => {
    app.log.info({ signal }, 'shutting down');
    void close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
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
          lock?.release();
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
      }
    })());

  if (options.handleSignals !== false) for (const signal of signals) process.once(signal, onSignal);
  return { app, db, worker, address, close };
}
