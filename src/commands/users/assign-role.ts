import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { users } from '../../client/endpoints.js';

const body = bodyFlags(users.assignRole);

export default class UsersAssignRole extends ApiCommand<typeof UsersAssignRole> {
  static override summary = "Change a user's role (not your own; needs a session with MFA)";
  static override description = `The role must be of the user's scope: a partner role for partner users, an organization role for organization users. \`svc users roles\` lists the roles you can assign.`;
  static override examples = ['<%= config.bin %> users assign-role 2c8d… --role-id 5e1b…'];
  static override args = idArg('User');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = ['id', 'email', 'name', 'roleId', 'roleName', 'scope'];

  async run() {
    return this.call(users.assignRole, {
      params: { id: this.args.id },
      body: await this.bodyFrom(body),
    });
  }
}
