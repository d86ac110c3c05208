import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { Flags } from '../../cli/flags.js';
import { webhooks } from '../../client/endpoints.js';

export default class WebhooksRetry extends ApiCommand<typeof WebhooksRetry> {
  static override summary = 'Send a failed delivery again, as a new pending delivery';
  static override examples = ['<%= config.bin %> webhooks retry 61c7… --delivery-id 0e4f…'];
  static override args = idArg('Webhook');
  static override flags = { 'delivery-id': Flags.string({ summary: 'The failed delivery.', required: true }), ...mutationFlags };

  async run() {
    return this.call(webhooks.retry, { params: { id: this.args.id, deliveryId: this.flags['delivery-id'] } });
  }
}
