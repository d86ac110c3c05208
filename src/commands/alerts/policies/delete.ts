import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default class AlertsPoliciesDelete extends ApiCommand<typeof AlertsPoliciesDelete> {
  static override summary = 'Delete an escalation policy (needs a session with MFA)';
  static override examples = ['<%= config.bin %> alerts policies delete 5e7a…', '<%= config.bin %> alerts policies delete 5e7a… --yes'];
  static override args = idArg('Escalation policy');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete escalation policy ${this.args.id}? Rules that name it no longer escalate.`);
    return this.call(alertPolicies.delete, { params: { id: this.args.id } });
  }
}
