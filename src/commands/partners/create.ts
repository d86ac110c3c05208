import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { tenancy } from '../../client/endpoints.js';

const body = bodyFlags(tenancy.createPartner);

export default class PartnersCreate extends ApiCommand<typeof PartnersCreate> {
  static override summary = 'Create a partner (active unless --status says otherwise)';
  static override examples = [
    '<%= config.bin %> partners create --name "Acme MSP" --slug acme',
    '<%= config.bin %> partners create --name "Acme MSP" --slug acme --plan pro --settings \'{"timezone":"Europe/Berlin"}\'',
    '<%= config.bin %> partners create --from-file partner.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };

  async run() {
    return this.call(tenancy.createPartner, { body: await this.bodyFrom(body) });
  }
}
