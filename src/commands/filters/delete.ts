import { confirmCommand } from '../../cli/resource-commands.js';
import { filters } from '../../client/endpoints.js';

export default confirmCommand(filters.delete, 'Saved filter', {
  summary: 'Delete a saved filter (needs a session with MFA)',
  examples: ['<%= config.bin %> filters delete 7d41… --yes'],
  confirm: (id) => `Delete saved filter ${id}?`,
  pick: (answer) => answer.data,
});
