import { updateCommand } from '../../cli/resource-commands.js';
import { users } from '../../client/endpoints.js';

export default updateCommand(users.update, 'User', {
  summary: 'Rename a user, or disable them (every session ends at once) or re-enable them (needs a session with MFA)',
  examples: [
    '<%= config.bin %> users update 2c8d… --name "Ada King"',
    '<%= config.bin %> users update 2c8d… --status disabled',
  ],
  columns: ['id', 'email', 'name', 'status', 'roleName', 'scope'],
});
