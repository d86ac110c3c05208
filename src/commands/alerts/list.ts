import { listCommand } from '../../cli/resource-commands.js';
import { ALERT_COLUMNS } from '../../cli/alerts-command.js';
import { alerts } from '../../client/endpoints.js';

export default listCommand(alerts.list, {
  summary: 'List alerts, newest first',
  examples: [
    '<%= config.bin %> alerts list --status active,acknowledged',
    '<%= config.bin %> alerts list --severity critical --device-id 5d0a…',
    '<%= config.bin %> alerts list --start-date 2026-11-01T00:00:00Z --all --output csv > alerts.csv',
  ],
  columns: ALERT_COLUMNS,
});
