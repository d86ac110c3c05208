import { childListCommand } from '../../cli/resource-commands.js';
import { webhooks } from '../../client/endpoints.js';

export default childListCommand(webhooks.deliveries, 'Webhook', {
  summary: "List a webhook's deliveries, newest first",
  examples: ['<%= config.bin %> webhooks deliveries 61c7…', '<%= config.bin %> webhooks deliveries 61c7… --status failed --output jsonl'],
  columns: ['id', 'event', 'status', 'attempt', 'responseStatus', 'nextAttemptAt', 'createdAt', 'deliveredAt'],
});
