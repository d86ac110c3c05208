import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { groups } from '../../client/endpoints.js';

const filters = queryFlags(groups.membershipLog, { omit: ['limit', 'offset'] });

export default class GroupsMembershipLog extends ApiCommand<typeof GroupsMembershipLog> {
  static override summary = 'Show the membership changes of a group, newest first';
  static override examples = [
    '<%= config.bin %> groups membership-log 7d41…',
    '<%= config.bin %> groups membership-log 7d41… --action removed --limit 100 --page 2',
    '<%= config.bin %> groups membership-log 7d41… --all --output csv > changes.csv',
  ];
  static override args = idArg('Group');
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['createdAt', 'action', 'hostname', 'deviceId', 'reason'];

  async run() {
    return this.listByOffset(groups.membershipLog, { params: { id: this.args.id }, query: this.queryFrom(filters) }, (answer) => answer);
  }
}
