import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class PartnersList extends ApiCommand<typeof PartnersList> {
  static override summary = 'List partners (system administrators)';
  static override examples = ['<%= config.bin %> partners list', '<%= config.bin %> partners list --all --output csv > partners.csv'];
  static override flags = { ...listFlags };
  static override columns = ['id', 'name', 'slug', 'type', 'plan', 'status', 'createdAt'];

  async run() {
    return this.list(tenancy.listPartners, {});
  }
}
