import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { Flags } from '../../cli/flags.js';
import { readDataFile } from '../../cli/files.js';
import { listFilterFlags } from '../../cli/schema-flags.js';
import { devices } from '../../client/endpoints.js';

const def = devices.list;
const filters = listFilterFlags(def, { omit: ['cursor', 'filter'] });

export default class DevicesList extends ApiCommand<typeof DevicesList> {
  static override summary = 'List devices, by hostname; narrow them with flags, a saved filter (--filter-id) or a condition tree (--where FILE)';
  static override examples = [
    '<%= config.bin %> devices list',
    '<%= config.bin %> devices list --org-id 3b9e… --status online --os-type windows',
    '<%= config.bin %> devices list --search web- --all --output csv > devices.csv',
    '<%= config.bin %> devices list --filter-id 7d41…',
    '<%= config.bin %> devices list --where stale-windows.json',
  ];
  static override flags = {
    ...filters.flags,
    where: Flags.string({ summary: 'A JSON or YAML file (- for stdin) with a condition tree the devices must match' }),
    ...listFlags,
  };
  static override columns = ['id', 'hostname', 'orgId', 'siteId', 'osType', 'status', 'agentVersion', 'lastSeenAt'];

  async run() {
    const query = this.queryFrom(filters);
    const where = this.flags.where === undefined ? {} : { filter: JSON.stringify(await readDataFile(this.flags.where, '--where')) };
    // With page (as list sends it) the answer is the counted page of the wire notes.
    return this.list(devices.list, { query: { ...query, ...where } }, (answer) => answer as { data: (typeof answer)['data']; pagination: { page: number; limit: number; total: number } });
  }
}
