import { createCommand } from '../../../cli/resource-commands.js';
import { SIGNER_GROUP_COLUMNS } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default createCommand(pam.createSignerGroup, {
  summary: 'Create a signer group, from flags or a JSON or YAML file (needs a session with MFA)',
  description: `Rules use it with --match-signer-group-id. Signers match case-insensitively; thumbprints are SHA-256 hex of signing certificates.`,
  examples: [
    '<%= config.bin %> pam signer-groups create --org-id 3b9e… --name "Trusted vendors" --signers "Vendor Inc,Other Corp"',
    '<%= config.bin %> pam signer-groups create --from-file signers.yaml',
  ],
  columns: SIGNER_GROUP_COLUMNS,
  descriptions: {
    name: 'Name of the group (1-255 characters).',
    description: 'What the group is for.',
  },
  pick: (answer) => answer.signerGroup,
});
