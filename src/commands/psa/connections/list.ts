import { listCommand } from '../../../cli/resource-commands.js';
import { psa } from '../../../client/endpoints.js';

export default listCommand(psa.list, {
  summary: 'List PSA connections, most recently updated first',
  examples: ['<%= config.bin %> psa connections list', '<%= config.bin %> psa connections list --org-id 3b9e… --provider jira'],
  columns: ['id', 'name', 'provider', 'status', 'enabled', 'orgId', 'hasCredentials', 'testStatus', 'lastSyncStatus', 'lastSyncedAt'],
});
