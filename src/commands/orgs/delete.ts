import { confirmCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default confirmCommand(tenancy.deleteOrganization, 'Organization', {
  summary: 'Delete an organization (soft delete: it disappears from every query)',
  examples: ['<%= config.bin %> orgs delete 3b9e…', '<%= config.bin %> orgs delete 3b9e… --yes'],
  confirm: (id) => `Delete organization ${id}?`,
});
