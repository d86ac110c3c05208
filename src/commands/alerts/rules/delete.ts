import { confirmCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default confirmCommand(alertTemplates.deleteRule, 'Rule', {
  summary: 'Delete an alert rule (its alerts stay as history)',
  examples: ['<%= config.bin %> alerts rules delete 7d41… --yes'],
  confirm: (id) => `Delete alert rule ${id}?`,
  pick: (answer) => answer.data,
});
