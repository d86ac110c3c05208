import { getCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';

export default getCommand(software.deploymentResults, 'Deployment', {
  summary: "Show a deployment's result on each target device",
  examples: ['<%= config.bin %> software deployments results 0c9e…', '<%= config.bin %> software deployments results 0c9e… -o csv'],
  columns: ['deviceId', 'status', 'message', 'exitCode', 'startedAt', 'completedAt'],
  pick: (answer) => answer.data,
});
