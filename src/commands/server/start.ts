import { Flags } from '../../cli/flags.js';
import { CommandError, honouring } from '../../cli/base-command.js';
import { ServerCommand } from '../../cli/server-command.js';

export default class ServerStart extends ServerCommand<typeof ServerStart> {
  static override summary = 'Run the bundled server (Fastify on SQLite) in the foreground';
  static override description = `Applies pending migrations, creates the system administrator on first start (from SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD, or with a generated password printed once to stderr), and serves the API until SIGINT or SIGTERM, when it stops accepting connections, finishes in-flight requests and closes the database. While it runs it holds <data dir>/server.pid; a second server on the same data dir is refused (exit 6), as is a port in use. A bad setting is exit 2 with a message naming it. Logs go to stderr as JSON lines. See \`svc help environment\` for every setting.`;
  static override examples = [
    '<%= config.bin %> server start',
    'SVC_ADMIN_EMAIL=admin@example.com SVC_ADMIN_PASSWORD=… <%= config.bin %> server start --port 8080',
    '<%= config.bin %> server start --host 0.0.0.0 --data-dir /var/lib/svc',
  ];
  // It prints no data: no output flag would do anything.
  static override baseFlags = honouring(ServerCommand.baseFlags, []);
  // HOST, PORT and SVC_LOG_LEVEL are read by the server's configuration (zod), not by oclif, so a bad value
  // fails with the variable's own name; a flag overrides its variable.
  static override flags = {
    host: Flags.string({ summary: 'Address to listen on (env HOST; default 127.0.0.1).' }),
    port: Flags.integer({
      summary: 'Port to listen on (env PORT; default 3000; 0 picks a free one).',
      min: 0,
      max: 65535,
    }),
    'log-level': Flags.string({
      summary: 'Log level (env SVC_LOG_LEVEL; default info).',
      options: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
    }),
  };

  async run() {
    const config = await this.serverConfig({
      host: this.flags.host,
      port: this.flags.port,
      'log-level': this.flags['log-level'],
    });
    const { startServer } = await import('../../server/server.js');
    const { loggerOptions } = await import('../../server/logging.js');
    const logger = loggerOptions(config.logLevel);
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer(config, {
        logger: typeof logger === 'object' ? { ...logger, stream: process.stderr } : false,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new CommandError(
          `${config.host}:${config.port} is in use by another process`,
          6,
          'ADDRESS_IN_USE',
          'Pick another port with --port or PORT.',
        );
      }
      throw err;
    }
    this.info(`svc server listening on ${server.address} (data in ${config.dataDir})`);
    await new Promise<void>(() => {
      // Runs until a signal; server.ts closes gracefully and exits.
    });
    return undefined;
  }
}
