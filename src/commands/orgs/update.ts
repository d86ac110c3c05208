import { updateCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default updateCommand(tenancy.updateOrganization, 'Organization', {
  summary: 'Update an organization',
  examples: [
    '<%= config.bin %> orgs update 3b9e… --status suspended',
    '<%= config.bin %> orgs update 3b9e… --contract-end 2027-12-31T00:00:00Z --max-devices null',
  ],
  descriptions: { partnerId: 'Immutable: accepted only when it equals the current partner.' },
});
