import { listCommand } from '../../../cli/resource-commands.js';
import { POLICY_COLUMNS } from '../../../cli/alert-columns.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default listCommand(alertPolicies.list, {
  summary: 'List escalation policies, most recently updated first',
  examples: ['<%= config.bin %> alerts policies list', '<%= config.bin %> alerts policies list --org-id 3b9e…'],
  columns: POLICY_COLUMNS,
});
