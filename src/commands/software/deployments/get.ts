import { getCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';

export default getCommand(software.getDeployment, 'Deployment', {
  summary: 'Show a software deployment',
  examples: ['<%= config.bin %> software deployments get 0c9e…'],
  pick: (answer) => answer.data,
});
