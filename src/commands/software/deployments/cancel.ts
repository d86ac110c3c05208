import { bodyCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { DEPLOYMENT_COLUMNS } from '../../../cli/software-columns.js';

export default bodyCommand(software.cancelDeployment, {
  what: 'Deployment',
  fromFile: false,
  summary: 'Cancel a deployment that is still pending or queued (needs a session with MFA)',
  examples: ['<%= config.bin %> software deployments cancel 0c9e… --reason "maintenance window moved"'],
  columns: DEPLOYMENT_COLUMNS,
  pick: (answer) => answer.data,
});
