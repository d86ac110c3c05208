import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default class PamRulesReapprove extends ApiCommand<typeof PamRulesReapprove> {
  static override summary =
    'Restore the verdict of a rule suspended by the v0.112.0 upgrade (needs a session with MFA)';
  static override description = `The v0.112.0 upgrade switched auto_approve rules to require_approval and kept the old verdict as suspendedVerdict. Re-approving restores it (the rule auto-approves again) and records who did it and when. A rule that is not suspended is refused (exit 6).

It turns automatic approval back on, so it asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> pam rules reapprove 7d41…',
    '<%= config.bin %> pam rules reapprove 7d41… --yes',
  ];
  static override args = idArg('Elevation rule');
  static override flags = { ...mutationFlags };
  static override columns = [...RULE_COLUMNS, 'reapprovedAt', 'reapprovedByUserId'];

  async run() {
    const { id } = this.args;
    await this.confirm(`Re-approve elevation rule ${id}? Its suspended verdict (auto_approve) applies again at once.`);
    return (await this.call(pam.updateRule, { params: { id }, body: { reapprove: true } })).rule;
  }
}
