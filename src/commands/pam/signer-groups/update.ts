import { SIGNER_GROUP_COLUMNS } from '../../../cli/pam-command.js';
import { updateCommand } from '../../../cli/resource-commands.js';
import { pam } from '../../../client/endpoints.js';

export default updateCommand(pam.updateSignerGroup, 'Signer group', {
  summary: 'Change a signer group: its name, description, or its lists (each replaced whole) (needs a session with MFA)',
  examples: [
    '<%= config.bin %> pam signer-groups update 4e8b… --name "Trusted vendors (2026)"',
    '<%= config.bin %> pam signer-groups update 4e8b… --signers "Vendor Inc" --signers "Third Ltd"',
  ],
  descriptions: {
    signers: 'Replaces every signer of the group.',
    thumbprints: 'Replaces every thumbprint of the group (SHA-256 hex).',
  },
  columns: SIGNER_GROUP_COLUMNS,
  requireChange: true,
  pick: (answer) => answer.signerGroup,
});
