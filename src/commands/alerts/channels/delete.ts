import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { alertChannels } from '../../../client/endpoints.js';

export default class AlertsChannelsDelete extends ApiCommand<typeof AlertsChannelsDelete> {
  static override summary = 'Delete a notification channel (needs a session with MFA)';
  static override examples = ['<%= config.bin %> alerts channels delete 8c1d…', '<%= config.bin %> alerts channels delete 8c1d… --yes'];
  static override args = idArg('Notification channel');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete notification channel ${this.args.id}? Alerts are no longer sent to it.`);
    return this.call(alertChannels.delete, { params: { id: this.args.id } });
  }
}
