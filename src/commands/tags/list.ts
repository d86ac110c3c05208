import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { tags } from '../../client/endpoints.js';

const query = queryFlags(tags.list);

export default class TagsList extends ApiCommand<typeof TagsList> {
  static override summary = 'List the device tags in use, most used first';
  static override examples = ['<%= config.bin %> tags list', '<%= config.bin %> tags list --search prod'];
  static override flags = { ...query.flags };
  static override columns = ['tag', 'deviceCount'];

  async run() {
    return (await this.call(tags.list, { query: this.queryFrom(query) })).data;
  }
}
