import { idArg } from '../../cli/args.js';
import { updateFlags } from '../../cli/api-command.js';
import { permissionFlags, withPermissions } from '../../cli/permissions.js';
import { RoleCommand } from '../../cli/role-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { roles } from '../../client/endpoints.js';

const body = bodyFlags(roles.update, { omit: ['permissions'] });

export default class RolesUpdate extends RoleCommand<typeof RolesUpdate> {
  static override summary = 'Update a custom role; built-in roles are immutable (needs a session with MFA)';
  static override description = `--permission (repeatable) and --permissions-file REPLACE every permission of the role; leave both out to keep them. --parent-role-id null removes inheritance.`;
  static override examples = [
    '<%= config.bin %> roles update 5e1b… --name "Helpdesk (EU)"',
    '<%= config.bin %> roles update 5e1b… --permission devices:read --permission scripts:execute',
    '<%= config.bin %> roles update 5e1b… --permissions-file other-role.json --parent-role-id null',
  ];
  static override args = idArg('Role');
  static override flags = { ...body.flags, ...permissionFlags, ...updateFlags };

  async run() {
    const request = await withPermissions(await this.bodyFrom(body), this.flags);
    return this.call(roles.update, { params: { id: this.args.id }, body: request });
  }
}
