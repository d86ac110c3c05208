import { ApiCommand } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsGet extends ApiCommand<typeof GroupsGet> {
  static override summary = 'Show a device group';
  static override examples = ['<%= config.bin %> groups get 7d41… --output json'];
  static override args = idArg('Group');

  async run() {
    return (await this.call(groups.get, { params: { id: this.args.id } })).data;
  }
}
