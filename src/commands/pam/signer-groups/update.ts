import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { SIGNER_GROUP_COLUMNS } from '../../../cli/pam-command.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.updateSignerGroup;
const body = bodyFlags(def, {
  descriptions: {
    signers: 'Replaces every signer of the group.',
    thumbprints: 'Replaces every thumbprint of the group (SHA-256 hex).',
  },
});

export default class PamSignerGroupsUpdate extends ApiCommand<typeof PamSignerGroupsUpdate> {
  static override summary =
    'Change a signer group: its name, description, or its lists (each replaced whole) (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> pam signer-groups update 4e8b… --name "Trusted vendors (2026)"',
    '<%= config.bin %> pam signer-groups update 4e8b… --signers "Vendor Inc" --signers "Third Ltd"',
  ];
  static override args = idArg('Signer group');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = SIGNER_GROUP_COLUMNS;

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0)
      throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return (await this.call(def, { params: { id: this.args.id }, body: patch })).signerGroup;
  }
}
