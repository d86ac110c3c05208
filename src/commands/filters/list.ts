import { queryCommand } from '../../cli/resource-commands.js';
import { filters } from '../../client/endpoints.js';

export default queryCommand(filters.list, {
  summary: 'List saved device filters, newest first',
  examples: ['<%= config.bin %> filters list', '<%= config.bin %> filters list --search windows --output json'],
  columns: ['id', 'name', 'orgId', 'description', 'createdAt', 'updatedAt'],
  pick: (answer) => answer.data,
});
