import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { webhooks } from '../../client/endpoints.js';

export default class WebhooksGet extends ApiCommand<typeof WebhooksGet> {
  static override summary = 'Show a webhook with its delivery statistics (never its secret)';
  static override examples = ['<%= config.bin %> webhooks get 61c7…', '<%= config.bin %> webhooks get 61c7… --output yaml'];
  static override args = idArg('Webhook');

  async run() {
    return this.call(webhooks.get, { params: { id: this.args.id } });
  }
}
