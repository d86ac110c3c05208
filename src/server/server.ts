import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from './app.js';
import type { ServerConfig } from './config.js';

export interface RunningServer {
  app: FastifyInstance;
  address: string;
  /** Stops accepting, lets in-flight requests finish, stops the worker and closes the database. */
  close(): Promise<void>;
}

/** Process concerns: listen, start the worker, and shut down gracefully on SIGINT/SIGTERM. */
export async function startServer(config: ServerConfig, options: BuildOptions & { handleSignals?: boolean } = {}): Promise<RunningServer> {
  const { app, worker } = await buildApp(config, options);
  const address = await app.listen({ host: config.host, port: config.port });
  worker.start();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const timer = setTimeout(() => {
        app.log.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs);
      timer.unref();
      await app.close();
      clearTimeout(timer);
    })());

  if (options.handleSignals !== false) {
    const onSignal = (signal: NodeJS.Signals) => {
      app.log.info({ signal }, 'shutting down');
      void close().then(() => process.exit(0));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  return { app, address, close };
}
