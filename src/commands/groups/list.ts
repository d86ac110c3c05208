import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { groups } from '../../client/endpoints.js';

const query = queryFlags(groups.list);

export default class GroupsList extends ApiCommand<typeof GroupsList> {
  static override summary = 'List device groups, by name';
  static override examples = ['<%= config.bin %> groups list', '<%= config.bin %> groups list --type dynamic'];
  static override flags = { ...query.flags };
  static override columns = ['id', 'name', 'type', 'orgId', 'siteId', 'deviceCount', 'parentId', 'updatedAt'];

  async run() {
    return (await this.call(groups.list, { query: this.queryFrom(query) })).data;
  }
}
