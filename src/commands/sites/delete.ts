import { confirmCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default confirmCommand(tenancy.deleteSite, 'Site', {
  summary: 'Delete a site (permanently)',
  examples: ['<%= config.bin %> sites delete 5d0a…', '<%= config.bin %> sites delete 5d0a… --yes'],
  confirm: (id) => `Delete site ${id} permanently?`,
});
