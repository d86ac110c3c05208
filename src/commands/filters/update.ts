import { updateCommand } from '../../cli/resource-commands.js';
import { filters } from '../../client/endpoints.js';

export default updateCommand(filters.update, 'Saved filter', {
  summary: 'Change a saved filter: only the fields given (needs a session with MFA)',
  examples: ['<%= config.bin %> filters update 7d41… --name "Stale servers"', '<%= config.bin %> filters update 7d41… --description null'],
  columns: ['id', 'name', 'orgId', 'description', 'createdAt', 'updatedAt'],
  requireChange: 'Nothing to change: give --name, --description or --conditions',
  pick: (answer) => answer.data,
});
