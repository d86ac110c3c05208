import { listCommand } from '../../cli/resource-commands.js';
import { apiKeys } from '../../client/endpoints.js';

export default listCommand(apiKeys.list, {
  summary: 'List API keys, newest first (metadata only: a key is shown once, when created or rotated)',
  description: `Key management needs a user session (not an API key).`,
  examples: [
    '<%= config.bin %> api-keys list',
    '<%= config.bin %> api-keys list --org-id 3b9e… --status active',
    '<%= config.bin %> api-keys list --all --output csv > api-keys.csv',
  ],
  columns: ['id', 'name', 'keyPrefix', 'orgId', 'status', 'scopes', 'expiresAt', 'lastUsedAt'],
});
