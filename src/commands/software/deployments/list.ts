import { listCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { DEPLOYMENT_COLUMNS } from '../../../cli/software-columns.js';

export default listCommand(software.listDeployments, {
  summary: 'List software deployments, newest first',
  examples: ['<%= config.bin %> software deployments list', '<%= config.bin %> software deployments list --status failed --all -o csv > failed.csv'],
  columns: DEPLOYMENT_COLUMNS,
});
