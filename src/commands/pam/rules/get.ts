import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { getOrFindInList, onePage } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default class PamRulesGet extends ApiCommand<typeof PamRulesGet> {
  static override summary = 'Show an elevation rule';
  static override examples = [
    '<%= config.bin %> pam rules get 7d41…',
    '<%= config.bin %> pam rules get 7d41… --output yaml > rule.yaml',
  ];
  static override args = idArg('Elevation rule');

  async run() {
    const id = this.args.id;
    return getOrFindInList({
      get: async () => (await this.call(pam.getRule, { params: { id } })).rule,
      pages: () => onePage(async () => (await this.call(pam.listRules, {})).rules),
      what: 'Elevation rule',
      id,
      info: (line) => this.info(line),
    });
  }
}
