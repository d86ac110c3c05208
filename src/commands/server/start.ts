import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { dataDirFlag, serverConfig } from '../../cli/server-flags.js';

export default class ServerStart extends BaseCommand<typeof ServerStart> {
  static override summary = 'Run the bundled server (Fastify on SQLite) in the foreground';
  static override description = `Applies pending migrations, creates the system administrator on first start (from SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD, or with a generated password printed once to stderr), and serves the API until SIGINT or SIGTERM, when it finishes in-flight requests and closes the database. Logs go to stderr as JSON lines. See \`svc help environment\` for every setting.`;
  static override examples = [
    '<%= config.bin %> server start',
    'SVC_ADMIN_EMAIL=admin@example.com SVC_ADMIN_PASSWORD=… <%= config.bin %> server start --port 8080',
    '<%= config.bin %> server start --host 0.0.0.0 --data-dir /var/lib/svc',
  ];
  static override flags = {
    ...dataDirFlag,
    host: Flags.string({ summary: 'Address to listen on (default 127.0.0.1).', env: 'HOST' }),
    port: Flags.integer({ summary: 'Port to listen on (default 3000; 0 picks a free one).', env: 'PORT', min: 0, max: 65535 }),
    'log-level': Flags.string({ summary: 'Log level.', options: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], env: 'SVC_LOG_LEVEL' }),
  };

  async run() {
    const config = await serverConfig(this.flags);
    const { startServer } = await import('../../server/server.js');
    const { loggerOptions } = await import('../../server/logging.js');
    const logger = loggerOptions(config.logLevel);
    const server = await startServer(config, { logger: typeof logger === 'object' ? { ...logger, stream: process.stderr } : false });
    this.info(`svc server listening on ${server.address} (data in ${config.dataDir})`);
    await new Promise<void>(() => {
      // Runs until a signal; server.ts closes gracefully and exits.
    });
    return undefined;
  }
}
