import { createCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { DEPLOYMENT_COLUMNS } from '../../../cli/software-columns.js';

export default createCommand(software.createDeployment, {
  summary: 'Install, update or uninstall software on devices, now or at --schedule-at (needs a session with MFA)',
  examples: [
    '<%= config.bin %> software deployments create --software-id 7d41… --action install --device-ids 0d3f…,9a1c… --requested-by "ops@example.com"',
    '<%= config.bin %> software deployments create --software-id 7d41… --action update --device-ids 0d3f… --requested-by ops --schedule-at 2026-12-01T02:00:00Z',
  ],
  columns: DEPLOYMENT_COLUMNS,
  pick: (answer) => answer.data,
});
