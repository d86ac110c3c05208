import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { webhooks } from '../../client/endpoints.js';

const filters = queryFlags(webhooks.list, { omit: ['page', 'limit'] });

export default class WebhooksList extends ApiCommand<typeof WebhooksList> {
  static override summary = 'List webhooks, newest first';
  static override examples = ['<%= config.bin %> webhooks list', '<%= config.bin %> webhooks list --org-id 3b9e… --status failed'];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = ['id', 'name', 'url', 'status', 'events', 'orgId', 'lastDeliveryAt'];

  async run() {
    return this.list(webhooks.list, { query: this.queryFrom(filters) });
  }
}
