import { Args, Flags } from '../../cli/flags.js';
import { confirmOrRefuse } from '../../cli/prompts.js';
import { withProgress } from '../../cli/progress.js';
import { ServerCommand } from '../../cli/server-command.js';

export default class ServerRestore extends ServerCommand<typeof ServerRestore> {
  static override summary = 'Replace the bundled server database with a backup';
  static override description = `Checks that FILE is an svc database (SQLite integrity check, svc tables, a schema version not newer than this build's) and that the server keys the server will use after it can read its data (the environment's, else those saved beside it with --with-secrets, else the data dir's secrets.json; keys that cannot are refused with exit 6, naming the fix), asks for confirmation (--yes skips it; without a terminal and without --yes it refuses with exit 2), keeps the current database as svc.db.before-restore-<timestamp>, puts the backup in place (and with --with-secrets its keys, keeping a different secrets.json as secrets.json.before-restore-<timestamp>), removes stale -wal/-shm files and applies pending migrations. Every file it writes is 0600. Refuses (exit 6) while a server runs against the data dir: stop it first. An invalid FILE is exit 2.`;
  static override examples = [
    '<%= config.bin %> server restore svc-2026-11-22.db',
    '<%= config.bin %> server restore /backups/svc.db --yes --data-dir /var/lib/svc',
    '<%= config.bin %> server restore /backups/svc.db --with-secrets',
  ];
  static override args = {
    file: Args.string({ required: true, description: 'The backup to restore (from `svc server backup`).' }),
  };
  static override flags = {
    yes: Flags.boolean({ char: 'y', summary: 'Do not ask for confirmation.' }),
    'with-secrets': Flags.boolean({
      summary: 'Also put back the server keys saved beside FILE (FILE.secrets.json, from `backup --with-secrets`).',
    }),
  };
  static override columns = ['source', 'databaseFile', 'previous', 'secrets', 'applied', 'schemaVersion'];
  static override quietField = 'databaseFile';

  async run() {
    const config = await this.serverConfig();
    const { prepareRestore } = await import('../../server/ops/restore.js');
    const plan = await prepareRestore(config, this.args.file, { withSecrets: this.flags['with-secrets'] });
    try {
      const what = `${
        plan.replaces ? `Replace ${plan.databaseFile} (kept as svc.db.before-restore-…)` : `Create ${plan.databaseFile}`
      }${plan.secretsFile ? ' and the server keys' : ''}`;
      await confirmOrRefuse(
        `${what} with ${plan.source} (schema version ${plan.schemaVersion} of ${plan.shippedSchemaVersion})?`,
        { yes: this.flags.yes, terminal: this.terminal },
      );
    } catch (err) {
      plan.abort();
      throw err;
    }
    const result = await withProgress('Restoring the database…', { color: this.terminal.color }, () => plan.commit());
    for (const warning of result.warnings) this.warn(`Warning: ${warning}`);
    this.info(
      `Restored ${result.source} to ${result.databaseFile}${result.previous ? `; the replaced database is ${result.previous}` : ''}${result.secrets ? `; the server keys to ${result.secrets}${result.previousSecrets ? ` (the replaced ones are ${result.previousSecrets})` : ''}` : ''}. Applied ${result.applied} migration(s): schema version ${result.schemaVersion}.`,
    );
    return {
      source: result.source,
      databaseFile: result.databaseFile,
      previous: result.previous,
      secrets: result.secrets,
      previousSecrets: result.previousSecrets,
      applied: result.applied,
      schemaVersion: result.schemaVersion,
    };
  }
}
