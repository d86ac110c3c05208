import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { auth } from '../../../client/endpoints.js';

const body = bodyFlags(auth.updateMe);

export default class UsersMeUpdate extends ApiCommand<typeof UsersMeUpdate> {
  static override summary = "Update the signed-in user's name or avatar";
  static override examples = ['<%= config.bin %> users me update --name "Ada Lovelace"', '<%= config.bin %> users me update --avatar-url null'];
  static override flags = { ...body.flags, ...updateFlags };

  async run() {
    return this.call(auth.updateMe, { body: await this.bodyFrom(body) });
  }
}
