import { idArg } from '../../cli/args.js';
import { RoleCommand } from '../../cli/role-command.js';
import { roles } from '../../client/endpoints.js';

export default class RolesGet extends RoleCommand<typeof RolesGet> {
  static override summary = 'Show a role with its own permissions (inherited ones: `svc roles effective-permissions`)';
  static override examples = [
    '<%= config.bin %> roles get 5e1b…',
    '<%= config.bin %> roles get 5e1b… --output json > role.json',
  ];
  static override args = idArg('Role');

  async run() {
    return this.call(roles.get, { params: { id: this.args.id } });
  }
}
