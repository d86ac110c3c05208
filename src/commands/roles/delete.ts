import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { roles } from '../../client/endpoints.js';

export default class RolesDelete extends ApiCommand<typeof RolesDelete> {
  static override summary =
    'Delete a custom role that no user holds and no role inherits from (needs a session with MFA)';
  static override description = `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = ['<%= config.bin %> roles delete 5e1b…', '<%= config.bin %> roles delete 5e1b… --yes'];
  static override args = idArg('Role');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete role ${this.args.id} permanently?`);
    return this.call(roles.delete, { params: { id: this.args.id } });
  }
}
