import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { scripts } from '../../client/endpoints.js';

export default class ScriptsGet extends ApiCommand<typeof ScriptsGet> {
  static override summary = 'Show a script';
  static override examples = ['<%= config.bin %> scripts get 7a1c…'];
  static override args = idArg('Script');

  async run() {
    return this.call(scripts.get, { params: { id: this.args.id } });
  }
}
