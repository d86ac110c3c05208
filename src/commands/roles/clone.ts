import { idArg } from '../../cli/args.js';
import { createFlags } from '../../cli/api-command.js';
import { RoleCommand } from '../../cli/role-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { roles } from '../../client/endpoints.js';

const body = bodyFlags(roles.clone);

export default class RolesClone extends RoleCommand<typeof RolesClone> {
  static override summary =
    'Copy a role (built-in or custom) into a new custom role of your partner or organization (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> roles clone 5e1b… --name "Technician (no remote)"',
    'NEW=$(<%= config.bin %> roles clone 5e1b… --name Copy --quiet)',
  ];
  static override args = idArg('Role to copy');
  static override flags = { ...body.flags, ...createFlags };

  async run() {
    return this.call(roles.clone, {
      params: { id: this.args.id },
      body: await this.bodyFrom(body),
    });
  }
}
