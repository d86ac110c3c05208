import { listCommand } from '../../cli/resource-commands.js';
import { webhooks } from '../../client/endpoints.js';

export default listCommand(webhooks.list, {
  summary: 'List webhooks, newest first',
  examples: ['<%= config.bin %> webhooks list', '<%= config.bin %> webhooks list --org-id 3b9e… --status failed'],
  columns: ['id', 'name', 'url', 'status', 'events', 'orgId', 'lastDeliveryAt'],
});
