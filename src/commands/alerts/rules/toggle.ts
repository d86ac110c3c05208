import { RULE_COLUMNS } from '../../../cli/alerts-command.js';
import { bodyCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default bodyCommand(alertTemplates.toggleRule, {
  what: 'Rule',
  fromFile: false,
  summary: 'Enable (--enabled) or disable (--no-enabled) an alert rule',
  examples: ['<%= config.bin %> alerts rules toggle 7d41… --no-enabled', '<%= config.bin %> alerts rules toggle 7d41… --enabled'],
  columns: RULE_COLUMNS,
  pick: (answer) => answer.data,
});
