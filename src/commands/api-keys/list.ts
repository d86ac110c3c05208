import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { apiKeys } from '../../client/endpoints.js';

const def = apiKeys.list;
const filters = queryFlags(def, { omit: ['page', 'limit'] });

export default class ApiKeysList extends ApiCommand<typeof ApiKeysList> {
  static override summary = 'List API keys, newest first (metadata only: a key is shown once, when created or rotated)';
  static override description = `Key management needs a user session (not an API key).`;
  static override examples = [
    '<%= config.bin %> api-keys list',
    '<%= config.bin %> api-keys list --org-id 3b9e… --status active',
    '<%= config.bin %> api-keys list --all --output csv > api-keys.csv',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'keyPrefix', 'orgId', 'status', 'scopes', 'expiresAt', 'lastUsedAt'];

  async run() {
    const query = this.queryFrom(filters);
    return this.list(apiKeys.list, { query });
  }
}
