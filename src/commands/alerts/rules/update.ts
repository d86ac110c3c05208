import { RULE_COLUMNS } from '../../../cli/alerts-command.js';
import { updateCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default updateCommand(alertTemplates.updateRule, 'Rule', {
  summary: 'Change an alert rule: only the fields given',
  examples: ['<%= config.bin %> alerts rules update 7d41… --cooldown-minutes 60 --severity critical'],
  columns: RULE_COLUMNS,
  requireChange: true,
  pick: (answer) => answer.data,
});
