import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default class AlertsRulesDelete extends ApiCommand<typeof AlertsRulesDelete> {
  static override summary = 'Delete an alert rule (its alerts stay as history)';
  static override examples = ['<%= config.bin %> alerts rules delete 7d41… --yes'];
  static override args = idArg('Rule');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete alert rule ${this.args.id}?`);
    return (await this.call(alertTemplates.deleteRule, { params: { id: this.args.id } })).data;
  }
}
