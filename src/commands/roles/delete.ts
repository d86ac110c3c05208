import { confirmCommand } from '../../cli/resource-commands.js';
import { roles } from '../../client/endpoints.js';

export default confirmCommand(roles.delete, 'Role', {
  summary: 'Delete a custom role that no user holds and no role inherits from (needs a session with MFA)',
  description: `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`,
  examples: ['<%= config.bin %> roles delete 5e1b…', '<%= config.bin %> roles delete 5e1b… --yes'],
  confirm: (id) => `Delete role ${id} permanently?`,
});
