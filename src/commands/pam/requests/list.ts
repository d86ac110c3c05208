import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { REQUEST_COLUMNS } from '../../../cli/pam-command.js';
import { listFilterFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.listRequests;
const filters = listFilterFlags(def, {
  descriptions: {
    status: 'Only requests in this status.',
    flowType: 'Only requests of this flow: a UAC prompt, a technician asking for admin rights, or an AI tool action.',
    deviceId: 'Only requests of this device.',
    siteId: 'Only requests of devices of this site.',
    from: 'Requested at or after this ISO 8601 time, e.g. 2026-01-01T00:00:00Z.',
    to: 'Requested before this ISO 8601 time.',
  },
});

export default class PamRequestsList extends ApiCommand<typeof PamRequestsList> {
  static override summary = 'List elevation requests, newest first';
  static override description = `Site-restricted technicians see only the requests of their sites. --all follows every page (streamed with -o jsonl and csv).`;
  static override examples = [
    '<%= config.bin %> pam requests list --status pending',
    '<%= config.bin %> pam requests list --flow-type ai_tool_action --from 2026-01-01T00:00:00Z --output json',
    '<%= config.bin %> pam requests list --device-id 0d3f… --all --output csv > requests.csv',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = REQUEST_COLUMNS;

  async run() {
    return this.list(pam.listRequests, { query: this.queryFrom(filters) }, (answer) => ({
      data: answer.requests,
      pagination: answer.pagination,
    }));
  }
}
