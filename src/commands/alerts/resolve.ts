import { ALERT_COLUMNS, AlertTransitionCommand, idsArg } from '../../cli/alerts-command.js';
import { Flags } from '../../cli/flags.js';
import { mutationFlags } from '../../cli/api-command.js';
import { alerts } from '../../client/endpoints.js';

export default class AlertsResolve extends AlertTransitionCommand<typeof AlertsResolve> {
  static override summary = "Resolve alerts; the rule's cooldown starts (several ids: one bulk request)";
  static override examples = ['<%= config.bin %> alerts resolve 2a7c… --note "Disk cleaned"', '<%= config.bin %> alerts resolve 2a7c… 9f01…'];
  static override args = idsArg;
  static override flags = { note: Flags.string({ summary: 'Resolution note' }), ...mutationFlags };
  static override columns = ALERT_COLUMNS;

  async run() {
    const ids = await this.ids();
    const note = this.flags.note;
    if (ids.length > 1) return this.call(alerts.bulk, { body: { action: 'resolve', alertIds: ids, ...(note !== undefined ? { note } : {}) } });
    return this.call(alerts.resolve, { params: { id: this.args.id }, body: note !== undefined ? { note } : {} });
  }
}
