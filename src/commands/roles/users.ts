import { getCommand } from '../../cli/resource-commands.js';
import { roles } from '../../client/endpoints.js';

export default getCommand(roles.users, 'Role', {
  summary: 'List the users in your reach who hold a role',
  examples: ['<%= config.bin %> roles users 5e1b…', '<%= config.bin %> roles users 5e1b… --output csv'],
  columns: ['id', 'email', 'name', 'status', 'lastLoginAt'],
  pick: (answer) => answer.data,
});
