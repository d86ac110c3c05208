import { confirmCommand } from '../../../cli/resource-commands.js';
import { pam } from '../../../client/endpoints.js';

export default confirmCommand(pam.deleteSignerGroup, 'Signer group', {
  summary: 'Delete a signer group that no rule uses (needs a session with MFA)',
  description: `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`,
  examples: [
    '<%= config.bin %> pam signer-groups delete 4e8b…',
    '<%= config.bin %> pam signer-groups delete 4e8b… --yes',
  ],
  confirm: (id) => `Delete signer group ${id}?`,
  pick: (answer, id) => ({ id, ...answer }),
});
