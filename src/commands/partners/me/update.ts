import { bodyCommand } from '../../../cli/resource-commands.js';
import { tenancy } from '../../../client/endpoints.js';

export default bodyCommand(tenancy.updateMyPartner, {
  summary: "Update the caller's own partner (settings are merged into the current ones)",
  examples: [
    '<%= config.bin %> partners me update --name "Acme MSP GmbH"',
    '<%= config.bin %> partners me update --settings \'{"timezone":"Europe/Berlin","timeFormat":"24h"}\'',
    '<%= config.bin %> partners me update --billing-email null',
  ],
});
