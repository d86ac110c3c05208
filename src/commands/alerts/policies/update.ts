import { POLICY_COLUMNS } from '../../../cli/alert-columns.js';
import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertPolicies } from '../../../client/endpoints.js';

const def = alertPolicies.update;
const body = bodyFlags(def, {
  descriptions: { steps: 'The whole new list of steps as JSON: [{"delayMinutes":15,"channelIds":["…"]}].' },
});

export default class AlertsPoliciesUpdate extends ApiCommand<typeof AlertsPoliciesUpdate> {
  static override summary = 'Change an escalation policy: only the fields given (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> alerts policies update 5e7a… --name "Night shift (weekends)"',
    '<%= config.bin %> alerts policies update 5e7a… --from-file policy.yaml',
  ];
  static override args = idArg('Escalation policy');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = POLICY_COLUMNS;

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return this.call(def, { params: { id: this.args.id }, body: patch });
  }
}
