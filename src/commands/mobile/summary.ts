import { countsCommand } from '../../cli/resource-commands.js';
import { mobile } from '../../client/endpoints.js';

export default countsCommand(mobile.summary, {
  summary: 'Device and alert counts, as the mobile app shows them',
  examples: ['<%= config.bin %> mobile summary', '<%= config.bin %> mobile summary --org-id 3b9e… --output json'],
  groups: (answer) => ({ devices: answer.devices, alerts: answer.alerts }),
});
