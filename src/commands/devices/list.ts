import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { devices } from '../../client/endpoints.js';

const def = devices.list;
const filters = queryFlags(def, { omit: ['page', 'limit'] });

export default class DevicesList extends ApiCommand<typeof DevicesList> {
  static override summary = 'List devices, by hostname (decommissioned ones included)';
  static override examples = [
    '<%= config.bin %> devices list',
    '<%= config.bin %> devices list --org-id 3b9e… --status online --os-type windows',
    '<%= config.bin %> devices list --search web- --all --output csv > devices.csv',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'hostname', 'orgId', 'siteId', 'osType', 'status', 'agentVersion', 'lastSeenAt'];

  async run() {
    const query = this.queryFrom(filters);
    return this.list(devices.list, { query });
  }
}
