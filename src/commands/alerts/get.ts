import { getCommand } from '../../cli/resource-commands.js';
import { alerts } from '../../client/endpoints.js';

export default getCommand(alerts.get, 'Alert', {
  summary: 'Show an alert with its device, rule and notifications',
  examples: ['<%= config.bin %> alerts get 2a7c…', '<%= config.bin %> alerts get 2a7c… --output yaml'],
});
