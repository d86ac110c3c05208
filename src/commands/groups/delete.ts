import { confirmCommand } from '../../cli/resource-commands.js';
import { groups } from '../../client/endpoints.js';

export default confirmCommand(groups.delete, 'Group', {
  summary: 'Delete a device group without child groups (needs a session with MFA)',
  examples: ['<%= config.bin %> groups delete 7d41… --yes'],
  confirm: (id) => `Delete group ${id}?`,
  pick: (answer) => answer.data,
});
