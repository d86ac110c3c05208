import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.updateRule;
const body = bodyFlags(def, {
  omit: ['reapprove'],
  descriptions: {
    timeWindow:
      'When the rule applies, as JSON ("null" clears it): {"start":"08:00","end":"18:00","days":[1,2,3,4,5]}.',
  },
});

export default class PamRulesUpdate extends ApiCommand<typeof PamRulesUpdate> {
  static override summary =
    'Change an elevation rule: only the fields given, from flags or a JSON or YAML file (needs a session with MFA)';
  static override description = `A criterion given as "null" is cleared (e.g. --match-signer null). To restore the verdict of a rule suspended by the v0.112.0 upgrade, use \`svc pam rules reapprove\`.`;
  static override examples = [
    '<%= config.bin %> pam rules update 7d41… --priority 5 --no-enabled',
    '<%= config.bin %> pam rules update 7d41… --from-file rule.yaml',
    '<%= config.bin %> pam rules update 7d41… --match-command-line null',
  ];
  static override args = idArg('Elevation rule');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = RULE_COLUMNS;

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0)
      throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return (await this.call(def, { params: { id: this.args.id }, body: patch })).rule;
  }
}
