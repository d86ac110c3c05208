import { updateCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default updateCommand(tenancy.updateSite, 'Site', {
  summary: 'Update a site',
  examples: [
    '<%= config.bin %> sites update 5d0a… --name "Head office"',
    '<%= config.bin %> sites update 5d0a… --contact null',
  ],
  descriptions: {
    orgId: 'Immutable: accepted only when it equals the current organization.',
    timezone: 'IANA time zone, e.g. Europe/Berlin.',
  },
});
