import { BaseCommand } from '../../cli/base-command.js';
import { ENVIRONMENT } from '../../cli/help/topics.js';

export default class HelpEnvironment extends BaseCommand<typeof HelpEnvironment> {
  static override summary = 'Every environment variable the CLI and the bundled server read';
  static override description = 'Precedence for the connection: flag > environment > selected profile > the "default" profile. A bad server setting stops `svc server start` with a message naming the variable.';
  static override examples = ['<%= config.bin %> help environment', '<%= config.bin %> help environment --output csv'];
  static override columns = ['name', 'usedBy', 'default', 'meaning'];
  static override quietField = 'name';
  static override defaultOutput = 'table' as const;

  async run() {
    return ENVIRONMENT;
  }
}
