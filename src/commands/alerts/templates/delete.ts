import { confirmCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default confirmCommand(alertTemplates.deleteTemplate, 'Template', {
  summary: 'Delete a custom alert template that no rule uses',
  examples: ['<%= config.bin %> alerts templates delete 7d41… --yes'],
  confirm: (id) => `Delete alert template ${id}?`,
  pick: (answer) => answer.data,
});
