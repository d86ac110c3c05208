import { Flags } from '../../cli/flags.js';
import { honouring } from '../../cli/base-command.js';
import { ServerCommand } from '../../cli/server-command.js';

export default class ServerStart extends ServerCommand<typeof ServerStart> {
  static override summary = 'Run the bundled server (Fastify on SQLite) in the foreground';
  static override description = `Binds the address first, so a port in use (exit 6) or an address this machine does not have (exit 2) fails before anything is written. Then it applies pending migrations, checks the server keys against the database (keys that cannot read it: exit 6, naming the fix), creates the system administrator on first start (from SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD, or admin@svc.localhost with a generated password printed once to stderr; on later starts those variables are ignored, with a note), and serves the API until SIGINT or SIGTERM (\`svc server stop\`), when it stops accepting connections, finishes in-flight requests and closes the database. While it runs it holds <data dir>/server.pid, which records its pid and URL; a second server on the same data dir is refused (exit 6). The request log (JSON lines, never with credentials) goes to <data dir>/server.log (0600), or where --log-file or SVC_LOG_FILE says (\`-\`: stderr); the one-time password and the start and stop messages go to stderr. A bad setting is exit 2 with a message naming it. See \`svc help environment\` for every setting.`;
  static override examples = [
    '<%= config.bin %> server start',
    'SVC_ADMIN_EMAIL=admin@example.com SVC_ADMIN_PASSWORD=… <%= config.bin %> server start --port 8080',
    '<%= config.bin %> server start --host 0.0.0.0 --data-dir /var/lib/svc',
    '<%= config.bin %> server start --log-file - --log-level warn',
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
    'log-file': Flags.string({
      summary: 'Where the request log goes; - for stderr (env SVC_LOG_FILE; default <data dir>/server.log).',
    }),
  };

  async run() {
    const config = await this.serverConfig({
      host: this.flags.host,
      port: this.flags.port,
      'log-level': this.flags['log-level'],
      'log-file': this.flags['log-file'],
    });
    const { startServer } = await import('../../server/server.js');
    const server = await startServer(config);
    const wildcard = server.listen.host === '0.0.0.0' || server.listen.host === '::';
    const notes = [
      ...(wildcard ? [`bound to ${server.listen.host}: every address of this machine`] : []),
      `data in ${config.dataDir}`,
      ...(server.logFile ? [`log in ${server.logFile}`] : []),
    ];
    this.info(`svc server listening on ${server.address} (${notes.join('; ')})`);
    await new Promise<void>(() => {
      // Runs until a signal; server.ts closes gracefully and exits.
    });
    return undefined;
  }
}
