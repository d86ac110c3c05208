import { confirmCommand } from '../../../cli/resource-commands.js';
import { alertChannels } from '../../../client/endpoints.js';

export default confirmCommand(alertChannels.delete, 'Notification channel', {
  summary: 'Delete a notification channel (needs a session with MFA)',
  examples: ['<%= config.bin %> alerts channels delete 8c1d…', '<%= config.bin %> alerts channels delete 8c1d… --yes'],
  confirm: (id) => `Delete notification channel ${id}? Alerts are no longer sent to it.`,
});
