import { idArg } from '../../cli/args.js';
import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { webhooks } from '../../client/endpoints.js';

const filters = queryFlags(webhooks.deliveries, { omit: ['page', 'limit'] });

export default class WebhooksDeliveries extends ApiCommand<typeof WebhooksDeliveries> {
  static override summary = "List a webhook's deliveries, newest first";
  static override examples = ['<%= config.bin %> webhooks deliveries 61c7…', '<%= config.bin %> webhooks deliveries 61c7… --status failed --output jsonl'];
  static override args = idArg('Webhook');
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'event', 'status', 'attempt', 'responseStatus', 'nextAttemptAt', 'createdAt', 'deliveredAt'];

  async run() {
    return this.list(webhooks.deliveries, { params: { id: this.args.id }, query: this.queryFrom(filters) });
  }
}
