import { getCommand } from '../../../cli/resource-commands.js';
import { alertPolicies } from '../../../client/endpoints.js';

export default getCommand(alertPolicies.get, 'Escalation policy', {
  summary: 'Show an escalation policy',
  examples: [
    '<%= config.bin %> alerts policies get 5e7a…',
    '<%= config.bin %> alerts policies get 5e7a… --output yaml',
  ],
});
