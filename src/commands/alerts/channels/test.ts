import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { alertChannels } from '../../../client/endpoints.js';

export default class AlertsChannelsTest extends ApiCommand<typeof AlertsChannelsTest> {
  static override summary = 'Send a test message through a notification channel and show the outcome (needs a session with MFA)';
  static override description = 'The answer is the same whether or not the send worked: read testResult.success and testResult.message.';
  static override examples = ['<%= config.bin %> alerts channels test 8c1d…', '<%= config.bin %> alerts channels test 8c1d… --output json'];
  static override args = idArg('Notification channel');
  static override flags = { ...mutationFlags };

  async run() {
    return this.call(alertChannels.test, { params: { id: this.args.id } });
  }
}
