import { getCommand } from '../../cli/resource-commands.js';
import { apiKeys } from '../../client/endpoints.js';

export default getCommand(apiKeys.get, 'API key', {
  summary: "Show an API key's metadata (never the key itself)",
  examples: ['<%= config.bin %> api-keys get 9a2e…', '<%= config.bin %> api-keys get 9a2e… --output json'],
});
