import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { webhooks } from '../../client/endpoints.js';

export default class WebhooksDelete extends ApiCommand<typeof WebhooksDelete> {
  static override summary = 'Delete a webhook and its delivery records (permanently)';
  static override examples = ['<%= config.bin %> webhooks delete 61c7…', '<%= config.bin %> webhooks delete 61c7… --yes'];
  static override args = idArg('Webhook');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete webhook ${this.args.id} and its deliveries permanently?`);
    return this.call(webhooks.delete, { params: { id: this.args.id } });
  }
}
