import { updateCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default updateCommand(tenancy.updatePartner, 'Partner', {
  summary: 'Update a partner (settings are merged into the current ones)',
  examples: [
    '<%= config.bin %> partners update 7f1c… --status suspended',
    '<%= config.bin %> partners update 7f1c… --settings \'{"timeFormat":"24h"}\'',
  ],
});
