import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { scripts } from '../../client/endpoints.js';

const filters = queryFlags(scripts.list, { omit: ['page', 'limit'] });

export default class ScriptsList extends ApiCommand<typeof ScriptsList> {
  static override summary = 'List scripts, most recently updated first';
  static override examples = ['<%= config.bin %> scripts list', '<%= config.bin %> scripts list --os-type linux --include-system true'];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'language', 'osTypes', 'category', 'isSystem', 'version', 'updatedAt'];

  async run() {
    return this.list(scripts.list, { query: this.queryFrom(filters) });
  }
}
