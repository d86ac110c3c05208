import { confirmCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default confirmCommand(tenancy.deletePartner, 'Partner', {
  summary: 'Delete a partner (soft delete: it disappears from every query)',
  examples: ['<%= config.bin %> partners delete 7f1c… --yes'],
  confirm: (id) => `Delete partner ${id}?`,
});
