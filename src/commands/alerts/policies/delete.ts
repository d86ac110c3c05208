import { confirmCommand } from '../../../cli/resource-commands.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default confirmCommand(alertPolicies.delete, 'Escalation policy', {
  summary: 'Delete an escalation policy (needs a session with MFA)',
  examples: ['<%= config.bin %> alerts policies delete 5e7a…', '<%= config.bin %> alerts policies delete 5e7a… --yes'],
  confirm: (id) => `Delete escalation policy ${id}? Rules that name it no longer escalate.`,
});
