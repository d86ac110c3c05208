import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { ALERT_COLUMNS } from '../../cli/alerts-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { alerts } from '../../client/endpoints.js';

const filters = queryFlags(alerts.list, { omit: ['page', 'limit'] });

export default class AlertsList extends ApiCommand<typeof AlertsList> {
  static override summary = 'List alerts, newest first';
  static override examples = [
    '<%= config.bin %> alerts list --status active,acknowledged',
    '<%= config.bin %> alerts list --severity critical --device-id 5d0a…',
    '<%= config.bin %> alerts list --start-date 2026-11-01T00:00:00Z --all --output csv > alerts.csv',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ALERT_COLUMNS;

  async run() {
    return this.list(alerts.list, { query: this.queryFrom(filters) });
  }
}
