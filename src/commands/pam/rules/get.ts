import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { pam } from '../../../client/endpoints.js';

export default class PamRulesGet extends ApiCommand<typeof PamRulesGet> {
  static override summary = 'Show an elevation rule';
  static override examples = [
    '<%= config.bin %> pam rules get 7d41…',
    '<%= config.bin %> pam rules get 7d41… --output yaml > rule.yaml',
  ];
  static override args = idArg('Elevation rule');

  async run() {
    return (await this.call(pam.getRule, { params: { id: this.args.id } })).rule;
  }
}
