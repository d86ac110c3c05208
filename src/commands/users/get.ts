import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { users } from '../../client/endpoints.js';

export default class UsersGet extends ApiCommand<typeof UsersGet> {
  static override summary = 'Show a user with their role and membership';
  static override examples = ['<%= config.bin %> users get 2c8d…', '<%= config.bin %> users get 2c8d… --output json'];
  static override args = idArg('User');

  async run() {
    return this.call(users.get, { params: { id: this.args.id } });
  }
}
