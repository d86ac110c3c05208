import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { getOrFindInList, onePage } from '../../../cli/pam-command.js';
import { pam } from '../../../client/endpoints.js';

export default class PamSignerGroupsGet extends ApiCommand<typeof PamSignerGroupsGet> {
  static override summary = 'Show a signer group';
  static override examples = ['<%= config.bin %> pam signer-groups get 4e8b…'];
  static override args = idArg('Signer group');

  async run() {
    const id = this.args.id;
    return getOrFindInList({
      get: async () => (await this.call(pam.getSignerGroup, { params: { id } })).signerGroup,
      pages: () => onePage(async () => (await this.call(pam.listSignerGroups, {})).signerGroups),
      what: 'Signer group',
      id,
      info: (line) => this.info(line),
    });
  }
}
