import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { flagsFor } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const def = tenancy.listSites;
const filters = flagsFor(def.query, { omit: ['page', 'limit', 'organizationId'], descriptions: { orgId: 'Only the sites of this organization.' } });

export default class SitesList extends ApiCommand<typeof SitesList> {
  static override summary = 'List sites';
  static override examples = [
    '<%= config.bin %> sites list --org-id 3b9e…',
    '<%= config.bin %> sites list --all --output jsonl | jq .name',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'orgId', 'timezone', 'createdAt'];

  async run() {
    const api = await this.api({ tenancy });
    const query = this.queryFrom(def, filters.fields);
    return this.list((page, limit) => api.tenancy.listSites({ query: { ...query, page, limit } }));
  }
}
