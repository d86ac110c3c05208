import { Flags } from '../../cli/flags.js';
import { ServerCommand } from '../../cli/server-command.js';

export default class ServerStatus extends ServerCommand<typeof ServerStatus> {
  static override summary = 'Show the bundled server: data dir, database, schema version and health';
  static override description = `Reads the data dir without a server: the database file and its size, the schema version applied against the one this build ships, pending migrations, when it was initialized, and queued or dead jobs. Then, if a server answers, adds its /health and /health/ready: at --base-url (or HOST and --port), else at the URL the running server recorded in <data dir>/server.pid, else at HOST and PORT (default 127.0.0.1 and 3000).

Exit codes: 0 when the database is readable (whether or not a server is running); 8 when the database is missing or unreadable, or when a server answers but is not ready.`;
  static override examples = [
    '<%= config.bin %> server status',
    '<%= config.bin %> server status -o json',
    '<%= config.bin %> server status --base-url http://127.0.0.1:8080',
  ];
  static override flags = {
    'base-url': Flags.string({
      summary: 'Where to probe /health (default: the URL in the pid file of the running server).',
    }),
    port: Flags.integer({
      summary: 'Port of the local server to probe when no running server recorded its URL (env PORT; default 3000).',
      min: 1,
      max: 65535,
    }),
  };
  static override columns = [
    'version',
    'dataDir',
    'database.file',
    'database.sizeBytes',
    'database.error',
    'schema.version',
    'schema.shipped',
    'schema.pending',
    'initializedAt',
    'secrets',
    'jobs',
    'server.pid',
    'server.url',
    'server.health.status',
    'server.ready.status',
    'server.error',
  ];

  async run() {
    const config = await this.serverConfig();
    const { serverStatus, statusExitCode } = await import('../../server/ops/status.js');
    const status = await serverStatus(config, {
      baseUrl: this.flags['base-url'],
      ...(this.flags.port === undefined ? {} : { port: this.flags.port }),
    });
    const exitCode = statusExitCode(status);
    if (exitCode === 0) return status;
    // Printed here, as the base command would, before the exit code that says what is wrong.
    this.print(status);
    if (!status.database.exists) this.warn(`No database at ${status.database.file}: run \`svc server init\` or \`svc server start\`.`);
    else if (status.database.error) this.warn(`The database cannot be read: ${status.database.error}`);
    else this.warn(`The server at ${status.server.url} is not ready: ${status.server.error ?? 'unknown'}`);
    return this.exit(exitCode);
  }
}
