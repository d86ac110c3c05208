import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { filters } from '../../client/endpoints.js';

const query = queryFlags(filters.list);

export default class FiltersList extends ApiCommand<typeof FiltersList> {
  static override summary = 'List saved device filters, newest first';
  static override examples = ['<%= config.bin %> filters list', '<%= config.bin %> filters list --search windows --output json'];
  static override flags = { ...query.flags };
  static override columns = ['id', 'name', 'orgId', 'description', 'createdAt', 'updatedAt'];

  async run() {
    return (await this.call(filters.list, { query: this.queryFrom(query) })).data;
  }
}
