import { ApiCommand } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { groups } from '../../client/endpoints.js';

const query = queryFlags(groups.membershipLog);

export default class GroupsMembershipLog extends ApiCommand<typeof GroupsMembershipLog> {
  static override summary = 'Show the membership changes of a group, newest first';
  static override examples = ['<%= config.bin %> groups membership-log 7d41…', '<%= config.bin %> groups membership-log 7d41… --action removed --limit 200'];
  static override args = idArg('Group');
  static override flags = { ...query.flags };
  static override columns = ['createdAt', 'action', 'hostname', 'deviceId', 'reason'];

  async run() {
    return (await this.call(groups.membershipLog, { params: { id: this.args.id }, query: this.queryFrom(query) })).data;
  }
}
