import { ApiCommand } from '../../cli/api-command.js';
import { users } from '../../client/endpoints.js';

export default class UsersRoles extends ApiCommand<typeof UsersRoles> {
  static override summary = 'List the roles you can see and assign to users';
  static override examples = ['<%= config.bin %> users roles', '<%= config.bin %> users roles --output json'];
  static override columns = ['id', 'name', 'scope', 'isSystem', 'description'];

  async run() {
    return (await this.call(users.listRoles)).data;
  }
}
