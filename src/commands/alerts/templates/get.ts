import { getCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default getCommand(alertTemplates.getTemplate, 'Template', {
  summary: 'Show an alert template',
  examples: ['<%= config.bin %> alerts templates get 00000000-0000-4000-a000-000000000001'],
  pick: (answer) => answer.data,
});
