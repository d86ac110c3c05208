import { findableGetCommand } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default findableGetCommand(
  'Signer group',
  { def: pam.getSignerGroup, pick: (answer) => answer.signerGroup },
  { def: pam.listSignerGroups, items: (answer) => answer.signerGroups },
  { summary: 'Show a signer group', examples: ['<%= config.bin %> pam signer-groups get 4e8b…'] },
);
