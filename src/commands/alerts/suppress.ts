import { ALERT_COLUMNS, AlertTransitionCommand, idsArg } from '../../cli/alerts-command.js';
import { Flags } from '../../cli/flags.js';
import { mutationFlags } from '../../cli/api-command.js';
import { alerts } from '../../client/endpoints.js';

export default class AlertsSuppress extends AlertTransitionCommand<typeof AlertsSuppress> {
  static override summary = 'Suppress alerts until a time, or indefinitely (several ids: one bulk request)';
  static override examples = ['<%= config.bin %> alerts suppress 2a7c… --until 2026-12-01T08:00:00Z', '<%= config.bin %> alerts suppress 2a7c… 9f01…'];
  static override args = idsArg;
  static override flags = { until: Flags.string({ summary: 'Suppressed until (ISO 8601, in the future); omitted: indefinitely' }), ...mutationFlags };
  static override columns = ALERT_COLUMNS;

  async run() {
    const ids = await this.ids();
    const until = this.flags.until;
    if (ids.length > 1) return this.call(alerts.bulk, { body: { action: 'suppress', alertIds: ids, ...(until !== undefined ? { until } : {}) } });
    return this.call(alerts.suppress, { params: { id: this.args.id }, body: until !== undefined ? { until } : {} });
  }
}
