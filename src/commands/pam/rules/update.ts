import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { updateCommand } from '../../../cli/resource-commands.js';
import { pam } from '../../../client/endpoints.js';

export default updateCommand(pam.updateRule, 'Elevation rule', {
  summary: 'Change an elevation rule: only the fields given, from flags or a JSON or YAML file (needs a session with MFA)',
  description: `A criterion given as "null" is cleared (e.g. --match-signer null). To restore the verdict of a rule suspended by the v0.112.0 upgrade, use \`svc pam rules reapprove\`.`,
  examples: [
    '<%= config.bin %> pam rules update 7d41… --priority 5 --no-enabled',
    '<%= config.bin %> pam rules update 7d41… --from-file rule.yaml',
    '<%= config.bin %> pam rules update 7d41… --match-command-line null',
  ],
  omit: ['reapprove'],
  descriptions: {
    timeWindow: 'When the rule applies, as JSON ("null" clears it): {"start":"08:00","end":"18:00","days":[1,2,3,4,5]}.',
  },
  columns: RULE_COLUMNS,
  requireChange: true,
  pick: (answer) => answer.rule,
});
