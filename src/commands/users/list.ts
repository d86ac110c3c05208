import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { users } from '../../client/endpoints.js';

const def = users.list;
const filters = queryFlags(def, { omit: ['page', 'limit'] });

export default class UsersList extends ApiCommand<typeof UsersList> {
  static override summary = "List the users of the caller's partner or organization, by e-mail";
  static override examples = [
    '<%= config.bin %> users list',
    '<%= config.bin %> users list --status invited',
    '<%= config.bin %> users list --org-id 3b9e… --role-id 5e1b… --all --output csv > users.csv',
    '<%= config.bin %> users list --search ada',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'email', 'name', 'status', 'roleName', 'scope', 'mfaEnabled', 'lastLoginAt'];

  async run() {
    const query = this.queryFrom(filters);
    return this.list(users.list, { query });
  }
}
