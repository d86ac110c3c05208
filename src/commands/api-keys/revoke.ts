import { confirmCommand } from '../../cli/resource-commands.js';
import { apiKeys } from '../../client/endpoints.js';

export default confirmCommand(apiKeys.revoke, 'API key', {
  summary: 'Revoke an API key: it stops working at once, permanently (needs a session with MFA)',
  description: `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`,
  examples: ['<%= config.bin %> api-keys revoke 9a2e…', '<%= config.bin %> api-keys revoke 9a2e… --yes'],
  columns: ['apiKey.id', 'apiKey.name', 'apiKey.keyPrefix', 'apiKey.status', 'message'],
  quietField: 'apiKey.id',
  confirm: (id) => `Revoke API key ${id}? Everything that uses it stops working at once, permanently.`,
});
