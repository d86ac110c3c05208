import { getCommand } from '../../cli/resource-commands.js';
import { webhooks } from '../../client/endpoints.js';

export default getCommand(webhooks.get, 'Webhook', {
  summary: 'Show a webhook with its delivery statistics (never its secret)',
  examples: ['<%= config.bin %> webhooks get 61c7…', '<%= config.bin %> webhooks get 61c7… --output yaml'],
});
