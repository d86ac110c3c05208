import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { users } from '../../client/endpoints.js';

const body = bodyFlags(users.update);

export default class UsersUpdate extends ApiCommand<typeof UsersUpdate> {
  static override summary =
    'Rename a user, or disable them (every session ends at once) or re-enable them (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> users update 2c8d… --name "Ada King"',
    '<%= config.bin %> users update 2c8d… --status disabled',
  ];
  static override args = idArg('User');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = ['id', 'email', 'name', 'status', 'roleName', 'scope'];

  async run() {
    return this.call(users.update, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
