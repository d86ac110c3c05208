import { ApiCommand } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsMembers extends ApiCommand<typeof GroupsMembers> {
  static override summary = 'List the members of a device group (pinned ones marked)';
  static override examples = ['<%= config.bin %> groups members 7d41…'];
  static override args = idArg('Group');
  static override columns = ['deviceId', 'hostname', 'status', 'osType', 'isPinned', 'addedAt', 'addedBy'];

  async run() {
    return (await this.call(groups.members, { params: { id: this.args.id } })).data;
  }
}
