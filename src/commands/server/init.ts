import { ServerCommand } from '../../cli/server-command.js';
import { acceptedYesFlag } from '../../cli/server-flags.js';

export default class ServerInit extends ServerCommand<typeof ServerInit> {
  static override summary = 'Prepare the bundled server data dir without serving';
  static override description = `Does what a first start does, then stops: creates the data dir (0700), the server keys (secrets.json, 0600, unless all three come from the environment), the database with every migration, and the system administrator from SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD, or with a generated password printed once to stderr. On an initialized data dir it changes nothing but pending migrations. Refuses (exit 6) while a server runs against the data dir.`;
  static override examples = [
    '<%= config.bin %> server init',
    'SVC_ADMIN_EMAIL=admin@example.com SVC_ADMIN_PASSWORD=… <%= config.bin %> server init --data-dir /var/lib/svc',
  ];
  static override flags = {
    ...acceptedYesFlag('init does not ask.'),
  };
  static override columns = ['dataDir', 'databaseFile', 'secretsFile', 'created', 'applied', 'schemaVersion'];
  static override quietField = 'dataDir';

  async run() {
    const config = await this.serverConfig();
    const { initDataDir } = await import('../../server/ops/init.js');
    const result = await initDataDir(config, (message) => this.info(message));
    const made = Object.entries(result.created)
      .filter(([, created]) => created)
      .map(([what]) => what);
    this.info(
      made.length === 0
        ? `${result.dataDir} was initialized already (schema version ${result.schemaVersion}).`
        : `Initialized ${result.dataDir}: created ${made.join(', ')}.`,
    );
    return result;
  }
}
