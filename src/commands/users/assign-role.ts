import { updateCommand } from '../../cli/resource-commands.js';
import { users } from '../../client/endpoints.js';

export default updateCommand(users.assignRole, 'User', {
  summary: "Change a user's role (not your own; needs a session with MFA)",
  description: `The role must be of the user's scope: a partner role for partner users, an organization role for organization users. \`svc users roles\` lists the roles you can assign.`,
  examples: ['<%= config.bin %> users assign-role 2c8d… --role-id 5e1b…'],
  columns: ['id', 'email', 'name', 'roleId', 'roleName', 'scope'],
});
