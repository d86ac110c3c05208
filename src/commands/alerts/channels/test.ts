import { confirmCommand } from '../../../cli/resource-commands.js';
import { alertChannels } from '../../../client/endpoints.js';

export default confirmCommand(alertChannels.test, 'Notification channel', {
  summary: 'Send a test message through a notification channel and show the outcome (needs a session with MFA)',
  description: 'The answer is the same whether or not the send worked: read testResult.success and testResult.message.',
  examples: ['<%= config.bin %> alerts channels test 8c1d…', '<%= config.bin %> alerts channels test 8c1d… --output json'],
});
