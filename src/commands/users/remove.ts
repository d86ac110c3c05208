import { confirmCommand } from '../../cli/resource-commands.js';
import { users } from '../../client/endpoints.js';

export default confirmCommand(users.remove, 'User', {
  summary:
    "Remove a user from the caller's partner or organization (the account itself remains; needs a session with MFA)",
  description: `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`,
  examples: ['<%= config.bin %> users remove 2c8d…', '<%= config.bin %> users remove 2c8d… --yes'],
  confirm: (id) => `Remove user ${id}? They lose access to everything of this partner or organization.`,
});
