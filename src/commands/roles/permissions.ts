import { ApiCommand } from '../../cli/api-command.js';
import { showsRows } from '../../cli/row-output.js';
import { roles } from '../../client/endpoints.js';

export default class RolesPermissions extends ApiCommand<typeof RolesPermissions> {
  static override summary =
    'The permissions a role can grant: the named permissions and the view/create/update/delete/execute matrix';
  static override description = `Tables, CSV and JSON lines list the named permissions, one per row (what --permission takes); JSON and YAML print the server's whole answer, with the matrix.`;
  static override examples = [
    '<%= config.bin %> roles permissions',
    '<%= config.bin %> roles permissions --output json | jq .matrix',
    '<%= config.bin %> roles permissions --quiet',
  ];
  static override columns = ['permission', 'resource', 'action'];
  static override quietField = 'permission';

  async run() {
    const result = await this.call(roles.availablePermissions);
    return showsRows(this.format, this.flags.quiet) ? result.permissions : result;
  }
}
