import { getCommand } from '../../cli/resource-commands.js';
import { users } from '../../client/endpoints.js';

export default getCommand(users.get, 'User', {
  summary: 'Show a user with their role and membership',
  examples: ['<%= config.bin %> users get 2c8d…', '<%= config.bin %> users get 2c8d… --output json'],
});
