import { listCommand } from '../../cli/resource-commands.js';
import { users } from '../../client/endpoints.js';

export default listCommand(users.list, {
  summary: "List the users of the caller's partner or organization, by e-mail",
  examples: [
    '<%= config.bin %> users list',
    '<%= config.bin %> users list --status invited',
    '<%= config.bin %> users list --org-id 3b9e… --role-id 5e1b… --all --output csv > users.csv',
    '<%= config.bin %> users list --search ada',
  ],
  columns: ['id', 'email', 'name', 'status', 'roleName', 'scope', 'mfaEnabled', 'lastLoginAt'],
});
