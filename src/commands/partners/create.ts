import { createCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default createCommand(tenancy.createPartner, {
  summary: 'Create a partner (active unless --status says otherwise)',
  examples: [
    '<%= config.bin %> partners create --name "Acme MSP" --slug acme',
    '<%= config.bin %> partners create --name "Acme MSP" --slug acme --plan pro --settings \'{"timezone":"Europe/Berlin"}\'',
    '<%= config.bin %> partners create --from-file partner.yaml',
  ],
});
