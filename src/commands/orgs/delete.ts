import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class OrgsDelete extends ApiCommand<typeof OrgsDelete> {
  static override summary = 'Delete an organization (soft delete: it disappears from every query)';
  static override examples = ['<%= config.bin %> orgs delete 3b9e…', '<%= config.bin %> orgs delete 3b9e… --yes'];
  static override args = idArg('Organization');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete organization ${this.args.id}?`);
    return this.call(tenancy.deleteOrganization, { params: { id: this.args.id } });
  }
}
