import { BaseCommand } from '../../cli/base-command.js';
import { EXIT_CODES } from '../../cli/help/topics.js';

export default class HelpExitCodes extends BaseCommand<typeof HelpExitCodes> {
  static override summary = 'The exit codes of every command, and what each means';
  static override description = 'Scripts branch on these. An error also prints one line to stderr, `Error: <message> (<code>, HTTP <status>)`, and with --output json a JSON error object on stderr.';
  static override examples = ['<%= config.bin %> help exit-codes', '<%= config.bin %> help exit-codes --output json'];
  static override columns = ['code', 'meaning'];
  static override quietField = 'code';
  // A help page: a table unless --output asks for something else, terminal or not.
  static override defaultOutput = 'table' as const;

  async run() {
    return EXIT_CODES;
  }
}
