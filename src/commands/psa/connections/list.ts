import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { psa } from '../../../client/endpoints.js';

const filters = queryFlags(psa.list, { omit: ['page', 'limit'] });

export default class PsaConnectionsList extends ApiCommand<typeof PsaConnectionsList> {
  static override summary = 'List PSA connections, most recently updated first';
  static override examples = ['<%= config.bin %> psa connections list', '<%= config.bin %> psa connections list --org-id 3b9e… --provider jira'];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'provider', 'status', 'enabled', 'orgId', 'hasCredentials', 'testStatus', 'lastSyncStatus', 'lastSyncedAt'];

  async run() {
    return this.list(psa.list, { query: this.queryFrom(filters) });
  }
}
