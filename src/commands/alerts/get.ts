import { ApiCommand } from '../../cli/api-command.js';
import { idArg } from '../../cli/args.js';
import { alerts } from '../../client/endpoints.js';

export default class AlertsGet extends ApiCommand<typeof AlertsGet> {
  static override summary = 'Show an alert with its device, rule and notifications';
  static override examples = ['<%= config.bin %> alerts get 2a7c…', '<%= config.bin %> alerts get 2a7c… --output yaml'];
  static override args = idArg('Alert');

  async run() {
    return this.call(alerts.get, { params: { id: this.args.id } });
  }
}
