import { ApiCommand } from '../../../cli/api-command.js';
import { SIGNER_GROUP_COLUMNS } from '../../../cli/pam-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.listSignerGroups;
const filters = queryFlags(def);

export default class PamSignerGroupsList extends ApiCommand<typeof PamSignerGroupsList> {
  static override summary = 'List signer groups (reusable sets of code signers for elevation rules), by name';
  static override examples = [
    '<%= config.bin %> pam signer-groups list',
    '<%= config.bin %> pam signer-groups list --org-id 3b9e… --output json',
  ];
  static override flags = { ...filters.flags };
  static override columns = SIGNER_GROUP_COLUMNS;

  async run() {
    return (await this.call(pam.listSignerGroups, { query: this.queryFrom(filters) }))
      .signerGroups;
  }
}
