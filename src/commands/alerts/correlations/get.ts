import { ApiCommand } from '../../../cli/api-command.js';
import { Args } from '../../../cli/flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default class AlertsCorrelationsGet extends ApiCommand<typeof AlertsCorrelationsGet> {
  static override summary = "An alert's correlation links, related alerts and groups";
  static override examples = ['<%= config.bin %> alerts correlations get 2a7c… -o yaml'];
  static override args = { 'alert-id': Args.string({ required: true, description: 'Alert id' }) };

  async run() {
    return (await this.call(alertTemplates.getCorrelation, { params: { alertId: this.args['alert-id'] } })).data;
  }
}
