import { ALERT_COLUMNS, AlertTransitionCommand, idsArg } from '../../cli/alerts-command.js';
import { alerts } from '../../client/endpoints.js';

export default class AlertsAck extends AlertTransitionCommand<typeof AlertsAck> {
  static override summary = 'Acknowledge active alerts (several ids: one bulk request)';
  static override description = 'One id answers the updated alert; several answer {updated, skipped, failed} (alerts that are not active are skipped).';
  static override examples = ['<%= config.bin %> alerts ack 2a7c…', '<%= config.bin %> alerts ack 2a7c… 9f01… 77aa…'];
  static override args = idsArg;
  static override columns = ALERT_COLUMNS;

  async run() {
    const ids = this.ids();
    if (ids.length > 1) return this.call(alerts.bulk, { body: { action: 'acknowledge', alertIds: ids } });
    return this.call(alerts.acknowledge, { params: { id: this.args.id } });
  }
}
