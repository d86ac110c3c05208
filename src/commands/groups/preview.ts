import { ApiCommand } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { Flags } from '../../cli/flags.js';
import { groups } from '../../client/endpoints.js';

export default class GroupsPreview extends ApiCommand<typeof GroupsPreview> {
  static override summary = "Show the devices a dynamic group's conditions match now";
  static override examples = ['<%= config.bin %> groups preview 7d41… --limit 50'];
  static override args = idArg('Group');
  static override flags = { limit: Flags.integer({ summary: 'Devices shown, 1-100 (default 10)', min: 1, max: 100 }) };
  static override columns = ['id', 'hostname', 'displayName', 'osType', 'status', 'lastSeenAt'];

  async run() {
    const { data } = await this.call(groups.preview, { params: { id: this.args.id }, body: this.flags.limit ? { limit: this.flags.limit } : {} });
    this.infoAfterOutput(`${data.totalCount} device(s) match (evaluated ${data.evaluatedAt})`);
    return data.devices;
  }
}
