import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class PartnersDelete extends ApiCommand<typeof PartnersDelete> {
  static override summary = 'Delete a partner (soft delete: it disappears from every query)';
  static override examples = ['<%= config.bin %> partners delete 7f1c… --yes'];
  static override args = idArg('Partner');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete partner ${this.args.id}?`);
    return this.call(tenancy.deletePartner, { params: { id: this.args.id } });
  }
}
