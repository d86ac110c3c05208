import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { tenancy } from '../../client/endpoints.js';

export default class PartnersGet extends ApiCommand<typeof PartnersGet> {
  static override summary = 'Show a partner';
  static override examples = ['<%= config.bin %> partners get 7f1c…', '<%= config.bin %> partners get 7f1c… --output json'];
  static override args = idArg('Partner');

  async run() {
    return this.call(tenancy.getPartner, { params: { id: this.args.id } });
  }
}
