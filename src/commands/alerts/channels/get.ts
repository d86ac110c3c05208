import { idArg } from '../../../cli/args.js';
import { ApiCommand } from '../../../cli/api-command.js';
import { alertChannels } from '../../../client/endpoints.js';

export default class AlertsChannelsGet extends ApiCommand<typeof AlertsChannelsGet> {
  static override summary = 'Show a notification channel (secrets masked)';
  static override examples = ['<%= config.bin %> alerts channels get 8c1d…', '<%= config.bin %> alerts channels get 8c1d… --output yaml'];
  static override args = idArg('Notification channel');

  async run() {
    return this.call(alertChannels.get, { params: { id: this.args.id } });
  }
}
