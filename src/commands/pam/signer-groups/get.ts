import { findableGetCommand } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default findableGetCommand(
  'Signer group',
  {
    get: async (call, id) => (await call(pam.getSignerGroup, { params: { id } })).signerGroup,
    list: async (call, query) => (await call(pam.listSignerGroups, { query })).signerGroups,
  },
  { summary: 'Show a signer group', examples: ['<%= config.bin %> pam signer-groups get 4e8b…'] },
);
