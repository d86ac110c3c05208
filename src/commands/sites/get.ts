import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class SitesGet extends ApiCommand<typeof SitesGet> {
  static override summary = 'Show a site';
  static override examples = ['<%= config.bin %> sites get 5d0a…', '<%= config.bin %> sites get 5d0a… --output yaml'];
  static override args = idArg('Site');

  async run() {
    return this.call(tenancy.getSite, { params: { id: this.args.id } });
  }
}
