import { Args, Flags } from '../../cli/flags.js';
import { withProgress } from '../../cli/progress.js';
import { ServerCommand } from '../../cli/server-command.js';
import { acceptedYesFlag } from '../../cli/server-flags.js';

export default class ServerBackup extends ServerCommand<typeof ServerBackup> {
  static override summary = 'Take an online, consistent copy of the bundled server database';
  static override description = `Copies the database with SQLite's backup API: consistent, and safe while the server runs. The copy is written to a temp file beside FILE and renamed into place, so FILE is either the old content or a complete backup; it is one self-contained file (no -wal), readable only by its owner (0600). An existing FILE (or FILE.secrets.json) is refused (exit 2, as every command that writes a file) unless --force. The server keys (secrets.json in the data dir, or the environment) are not part of the backup, and the backup's MFA secrets and enrollment keys are unreadable without them: keep them with it, or pass --with-secrets to write them beside it as FILE.secrets.json (0600; keep it as safe as the keys themselves), which \`svc server restore FILE --with-secrets\` puts back.`;
  static override examples = [
    '<%= config.bin %> server backup svc-$(date +%F).db',
    '<%= config.bin %> server backup /backups/svc.db --force -o json',
    '<%= config.bin %> server backup /backups/svc.db --with-secrets',
  ];
  static override args = { file: Args.string({ required: true, description: 'Where to write the backup.' }) };
  static override flags = {
    force: Flags.boolean({ summary: 'Replace FILE (and FILE.secrets.json) if it exists.' }),
    'with-secrets': Flags.boolean({ summary: 'Also write the server keys beside the backup, as FILE.secrets.json (0600).' }),
    ...acceptedYesFlag('backup does not ask (see --force).'),
  };
  static override columns = ['file', 'secretsFile', 'sizeBytes', 'schemaVersion', 'createdAt'];
  static override quietField = 'file';

  async run() {
    const config = await this.serverConfig();
    const { backupDatabase } = await import('../../server/ops/backup.js');
    const result = await withProgress('Backing up the database…', { color: this.terminal.color }, () =>
      backupDatabase(config, this.args.file, { force: this.flags.force, withSecrets: this.flags['with-secrets'] }),
    );
    this.info(
      `Backed up ${result.databaseFile} to ${result.file} (${result.sizeBytes} bytes, schema version ${result.schemaVersion}).`,
    );
    this.info(
      result.secretsFile
        ? `The server keys are in ${result.secretsFile}: keep it as safe as the keys themselves.`
        : 'The server keys are not in the backup: keep the data dir\'s secrets.json with it, or pass --with-secrets.',
    );
    return result;
  }
}
