import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { pam } from '../../../client/endpoints.js';

export default class PamSignerGroupsGet extends ApiCommand<typeof PamSignerGroupsGet> {
  static override summary = 'Show a signer group';
  static override examples = ['<%= config.bin %> pam signer-groups get 4e8b…'];
  static override args = idArg('Signer group');

  async run() {
    return (await this.call(pam.getSignerGroup, { params: { id: this.args.id } })).signerGroup;
  }
}
