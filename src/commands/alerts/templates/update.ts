import { TEMPLATE_COLUMNS } from '../../../cli/alerts-command.js';
import { updateCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default updateCommand(alertTemplates.updateTemplate, 'Template', {
  summary: 'Change a custom alert template: only the fields given (built-ins are read-only)',
  examples: ['<%= config.bin %> alerts templates update 7d41… --severity critical --default-cooldown-minutes 60'],
  columns: TEMPLATE_COLUMNS,
  requireChange: true,
  pick: (answer) => answer.data,
});
