import { ApiCommand } from '../../cli/api-command.js';
import { roles } from '../../client/endpoints.js';

export default class RolesList extends ApiCommand<typeof RolesList> {
  static override summary =
    "List the built-in roles and your partner's or organization's custom roles, with how many users hold each";
  static override examples = ['<%= config.bin %> roles list', '<%= config.bin %> roles list --output json'];
  static override columns = ['id', 'name', 'scope', 'isSystem', 'parentRoleId', 'userCount', 'description'];

  async run() {
    return (await this.call(roles.list)).data;
  }
}
