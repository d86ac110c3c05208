import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsDelete extends ApiCommand<typeof GroupsDelete> {
  static override summary = 'Delete a device group without child groups (needs a session with MFA)';
  static override examples = ['<%= config.bin %> groups delete 7d41… --yes'];
  static override args = idArg('Group');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete group ${this.args.id}?`);
    return (await this.call(groups.delete, { params: { id: this.args.id } })).data;
  }
}
