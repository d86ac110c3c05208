import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class SitesDelete extends ApiCommand<typeof SitesDelete> {
  static override summary = 'Delete a site (permanently)';
  static override examples = ['<%= config.bin %> sites delete 5d0a…', '<%= config.bin %> sites delete 5d0a… --yes'];
  static override args = idArg('Site');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete site ${this.args.id} permanently?`);
    return this.call(tenancy.deleteSite, { params: { id: this.args.id } });
  }
}
