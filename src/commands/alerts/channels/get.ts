import { getCommand } from '../../../cli/resource-commands.js';
import { alertChannels } from '../../../client/endpoints.js';

export default getCommand(alertChannels.get, 'Notification channel', {
  summary: 'Show a notification channel (secrets masked)',
  examples: [
    '<%= config.bin %> alerts channels get 8c1d…',
    '<%= config.bin %> alerts channels get 8c1d… --output yaml',
  ],
});
