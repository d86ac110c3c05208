import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const def = tenancy.listSites;
const filters = queryFlags(def, { omit: ['page', 'limit', 'organizationId'], descriptions: { orgId: 'Only the sites of this organization.' } });

export default class SitesList extends ApiCommand<typeof SitesList> {
  static override summary = 'List sites';
  static override examples = [
    '<%= config.bin %> sites list --org-id 3b9e…',
    '<%= config.bin %> sites list --all --output jsonl | jq .name',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'orgId', 'timezone', 'createdAt'];

  async run() {
    const query = this.queryFrom(filters);
    return this.list(tenancy.listSites, { query });
  }
}
