import { CHANNEL_COLUMNS } from '../../../cli/alert-columns.js';
import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { alertChannels } from '../../../client/endpoints.js';

const def = alertChannels.list;
const filters = queryFlags(def, { omit: ['page', 'limit'] });

export default class AlertsChannelsList extends ApiCommand<typeof AlertsChannelsList> {
  static override summary = 'List notification channels, most recently updated first (secrets masked)';
  static override examples = [
    '<%= config.bin %> alerts channels list',
    '<%= config.bin %> alerts channels list --org-id 3b9e… --type webhook --enabled true',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = CHANNEL_COLUMNS;

  async run() {
    return this.list(def, { query: this.queryFrom(filters) });
  }
}
