import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default class AlertsRulesGet extends ApiCommand<typeof AlertsRulesGet> {
  static override summary = 'Show an alert rule';
  static override examples = ['<%= config.bin %> alerts rules get 7d41…'];
  static override args = idArg('Rule');

  async run() {
    return (await this.call(alertTemplates.getRule, { params: { id: this.args.id } })).data;
  }
}
