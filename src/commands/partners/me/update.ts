import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { tenancy } from '../../../client/endpoints.js';

const body = bodyFlags(tenancy.updateMyPartner);

export default class PartnersMeUpdate extends ApiCommand<typeof PartnersMeUpdate> {
  static override summary = "Update the caller's own partner (settings are merged into the current ones)";
  static override examples = [
    '<%= config.bin %> partners me update --name "Acme MSP GmbH"',
    '<%= config.bin %> partners me update --settings \'{"timezone":"Europe/Berlin","timeFormat":"24h"}\'',
    '<%= config.bin %> partners me update --billing-email null',
  ];
  static override flags = { ...body.flags, ...updateFlags };

  async run() {
    return this.call(tenancy.updateMyPartner, { body: await this.bodyFrom(body) });
  }
}
