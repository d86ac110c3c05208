import { getCommand } from '../../cli/resource-commands.js';
import { filters } from '../../client/endpoints.js';

export default getCommand(filters.get, 'Saved filter', {
  summary: 'Show a saved filter with its conditions',
  examples: ['<%= config.bin %> filters get 7d41… --output json'],
  pick: (answer) => answer.data,
});
