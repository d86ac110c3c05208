import { ApiCommand } from '../../cli/api-command.js';
import { auth } from '../../client/endpoints.js';

export default class UsersMe extends ApiCommand<typeof UsersMe> {
  static override summary = 'Show the signed-in user, with scope and effective permissions';
  static override examples = ['<%= config.bin %> users me', '<%= config.bin %> users me --output json'];

  async run() {
    return this.call(auth.getMe);
  }
}
