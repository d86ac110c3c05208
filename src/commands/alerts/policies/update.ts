import { POLICY_COLUMNS } from '../../../cli/alert-columns.js';
import { updateCommand } from '../../../cli/resource-commands.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default updateCommand(alertPolicies.update, 'Escalation policy', {
  summary: 'Change an escalation policy: only the fields given (needs a session with MFA)',
  examples: [
    '<%= config.bin %> alerts policies update 5e7a… --name "Night shift (weekends)"',
    '<%= config.bin %> alerts policies update 5e7a… --from-file policy.yaml',
  ],
  descriptions: { steps: 'The whole new list of steps as JSON: [{"delayMinutes":15,"channelIds":["…"]}].' },
  columns: POLICY_COLUMNS,
  requireChange: true,
});
