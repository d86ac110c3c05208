import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { pam } from '../../../client/endpoints.js';

export default class PamSignerGroupsDelete extends ApiCommand<typeof PamSignerGroupsDelete> {
  static override summary = 'Delete a signer group that no rule uses (needs a session with MFA)';
  static override description = `Asks for confirmation on a terminal; without one it refuses unless --yes is given (exit 2).`;
  static override examples = [
    '<%= config.bin %> pam signer-groups delete 4e8b…',
    '<%= config.bin %> pam signer-groups delete 4e8b… --yes',
  ];
  static override args = idArg('Signer group');
  static override flags = { ...mutationFlags };

  async run() {
    const { id } = this.args;
    await this.confirm(`Delete signer group ${id}?`);
    const result = await this.call(pam.deleteSignerGroup, { params: { id } });
    return { id, ...result };
  }
}
