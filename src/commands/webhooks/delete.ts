import { confirmCommand } from '../../cli/resource-commands.js';
import { webhooks } from '../../client/endpoints.js';

export default confirmCommand(webhooks.delete, 'Webhook', {
  summary: 'Delete a webhook and its delivery records (permanently)',
  examples: ['<%= config.bin %> webhooks delete 61c7…', '<%= config.bin %> webhooks delete 61c7… --yes'],
  confirm: (id) => `Delete webhook ${id} and its deliveries permanently?`,
});
