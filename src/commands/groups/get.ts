import { getCommand } from '../../cli/resource-commands.js';
import { groups } from '../../client/endpoints.js';

export default getCommand(groups.get, 'Group', {
  summary: 'Show a device group',
  examples: ['<%= config.bin %> groups get 7d41… --output json'],
  pick: (answer) => answer.data,
});
