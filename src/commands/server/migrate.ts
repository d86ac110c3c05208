import { ServerCommand } from '../../cli/server-command.js';
import { acceptedYesFlag } from '../../cli/server-flags.js';

export default class ServerMigrate extends ServerCommand<typeof ServerMigrate> {
  static override summary = 'Apply pending schema migrations to the bundled server database';
  static override description = `Applies the migrations this build ships that the database lacks, creating the database if there is none, and prints how many it applied. \`svc server start\` applies them too. With nothing pending it only reads, so it is safe next to a running server; with something pending it refuses (exit 6) while a server runs against the data dir. A database migrated by a newer svc is refused (exit 6).`;
  static override examples = [
    '<%= config.bin %> server migrate',
    '<%= config.bin %> server migrate --data-dir /var/lib/svc -o json',
  ];
  static override flags = {
    ...acceptedYesFlag('migrate does not ask.'),
  };
  static override columns = ['applied', 'schemaVersion', 'migrations', 'databaseFile'];

  async run() {
    const config = await this.serverConfig();
    const { migrateDatabase } = await import('../../server/ops/migrate.js');
    const result = await migrateDatabase(config);
    this.info(
      result.applied === 0
        ? `No pending migrations (schema version ${result.schemaVersion}).`
        : `Applied ${result.applied} migration(s): schema version ${result.schemaVersion}.`,
    );
    return {
      applied: result.applied,
      schemaVersion: result.schemaVersion,
      migrations: result.migrations,
      databaseFile: result.databaseFile,
    };
  }
}
