import { idArg } from '../../../cli/args.js';
import { ApiCommand } from '../../../cli/api-command.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default class AlertsPoliciesGet extends ApiCommand<typeof AlertsPoliciesGet> {
  static override summary = 'Show an escalation policy';
  static override examples = ['<%= config.bin %> alerts policies get 5e7a…', '<%= config.bin %> alerts policies get 5e7a… --output yaml'];
  static override args = idArg('Escalation policy');

  async run() {
    return this.call(alertPolicies.get, { params: { id: this.args.id } });
  }
}
