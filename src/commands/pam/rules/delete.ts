import { confirmCommand } from '../../../cli/resource-commands.js';
import { pam } from '../../../client/endpoints.js';

export default confirmCommand(pam.deleteRule, 'Elevation rule', {
  summary: 'Delete an elevation rule (needs a session with MFA)',
  description: `Requests it would have matched fall to the next rule, or to the organization default (\`svc pam config\`). Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`,
  examples: ['<%= config.bin %> pam rules delete 7d41…', '<%= config.bin %> pam rules delete 7d41… --yes'],
  confirm: (id) =>
    `Delete elevation rule ${id}? Requests it matched fall to the next rule or the organization default.`,
  pick: (answer, id) => ({ id, ...answer }),
});
