import { createCommand } from '../../../cli/resource-commands.js';
import { POLICY_COLUMNS } from '../../../cli/alert-columns.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default createCommand(alertPolicies.create, {
  summary:
    'Create an escalation policy: steps that send to channels while an alert stays unacknowledged (needs a session with MFA)',
  examples: [
    '<%= config.bin %> alerts policies create --org-id 7c9e6679-7425-40de-944b-e07fc1f90ae7 --name "Night shift" --steps \'[{"delayMinutes":15,"channelIds":["3f2b8c1d-5e6a-4b7c-8d9e-0a1b2c3d4e5f"]}]\'',
    '<%= config.bin %> alerts policies create --from-file policy.yaml',
    '<%= config.bin %> alerts policies create --from-file policy.json --name "Night shift"',
  ],
  columns: POLICY_COLUMNS,
  descriptions: {
    steps:
      'Steps as JSON: [{"delayMinutes":15,"channelIds":["…"]}]; each fires delayMinutes after the alert is triggered.',
  },
});
