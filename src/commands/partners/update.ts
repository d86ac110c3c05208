import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = bodyFlags(tenancy.updatePartner);

export default class PartnersUpdate extends ApiCommand<typeof PartnersUpdate> {
  static override summary = 'Update a partner (settings are merged into the current ones)';
  static override examples = ['<%= config.bin %> partners update 7f1c… --status suspended', '<%= config.bin %> partners update 7f1c… --settings \'{"timeFormat":"24h"}\''];
  static override args = idArg('Partner');
  static override flags = { ...body.flags, ...updateFlags };

  async run() {
    return this.call(tenancy.updatePartner, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
