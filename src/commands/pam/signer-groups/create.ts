import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { SIGNER_GROUP_COLUMNS } from '../../../cli/pam-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.createSignerGroup;
const body = bodyFlags(def, {
  descriptions: {
    name: 'Name of the group (1-255 characters).',
    description: 'What the group is for.',
  },
});

export default class PamSignerGroupsCreate extends ApiCommand<typeof PamSignerGroupsCreate> {
  static override summary = 'Create a signer group, from flags or a JSON or YAML file (needs a session with MFA)';
  static override description = `Rules use it with --match-signer-group-id. Signers match case-insensitively; thumbprints are SHA-256 hex of signing certificates.`;
  static override examples = [
    '<%= config.bin %> pam signer-groups create --org-id 3b9e… --name "Trusted vendors" --signers "Vendor Inc,Other Corp"',
    '<%= config.bin %> pam signer-groups create --from-file signers.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = SIGNER_GROUP_COLUMNS;

  async run() {
    return (await this.call(def, { body: await this.bodyFrom(body) })).signerGroup;
  }
}
