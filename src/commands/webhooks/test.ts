import { bodyCommand } from '../../cli/resource-commands.js';
import { webhooks } from '../../client/endpoints.js';

export default bodyCommand(webhooks.test, {
  what: 'Webhook',
  fromFile: false,
  summary: 'Queue a test delivery (event webhook.test unless --event is given)',
  examples: ['<%= config.bin %> webhooks test 61c7…', '<%= config.bin %> webhooks test 61c7… --event alert.triggered --payload \'{"alertId":"a-1"}\''],
});
