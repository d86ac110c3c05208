import { getCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default getCommand(alertTemplates.getRule, 'Rule', {
  summary: 'Show an alert rule',
  examples: ['<%= config.bin %> alerts rules get 7d41…'],
  pick: (answer) => answer.data,
});
