import { SIGNER_GROUP_COLUMNS } from '../../../cli/pam-command.js';
import { queryCommand } from '../../../cli/resource-commands.js';
import { pam } from '../../../client/endpoints.js';

export default queryCommand(pam.listSignerGroups, {
  summary: 'List signer groups (reusable sets of code signers for elevation rules), by name',
  examples: [
    '<%= config.bin %> pam signer-groups list',
    '<%= config.bin %> pam signer-groups list --org-id 3b9e… --output json',
  ],
  columns: SIGNER_GROUP_COLUMNS,
  pick: (answer) => answer.signerGroups,
});
