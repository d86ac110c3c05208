import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { users } from '../../client/endpoints.js';

export default class UsersRemove extends ApiCommand<typeof UsersRemove> {
  static override summary =
    "Remove a user from the caller's partner or organization (the account itself remains; needs a session with MFA)";
  static override description = `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = ['<%= config.bin %> users remove 2c8d…', '<%= config.bin %> users remove 2c8d… --yes'];
  static override args = idArg('User');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Remove user ${this.args.id}? They lose access to everything of this partner or organization.`);
    return this.call(users.remove, { params: { id: this.args.id } });
  }
}
