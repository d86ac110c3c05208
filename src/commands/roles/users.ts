import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { roles } from '../../client/endpoints.js';

export default class RolesUsers extends ApiCommand<typeof RolesUsers> {
  static override summary = 'List the users in your reach who hold a role';
  static override examples = [
    '<%= config.bin %> roles users 5e1b…',
    '<%= config.bin %> roles users 5e1b… --output csv',
  ];
  static override args = idArg('Role');
  static override columns = ['id', 'email', 'name', 'status', 'lastLoginAt'];

  async run() {
    return (await this.call(roles.users, { params: { id: this.args.id } })).data;
  }
}
