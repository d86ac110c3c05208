import { createCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default createCommand(tenancy.createSite, {
  summary: 'Create a site in an organization',
  examples: [
    '<%= config.bin %> sites create --org-id 3b9e… --name HQ --timezone Europe/Berlin',
    '<%= config.bin %> sites create --org-id 3b9e… --name Lab --address \'{"city":"Berlin"}\'',
    '<%= config.bin %> sites create --from-file site.json',
  ],
  descriptions: { orgId: 'The organization the site belongs to.', timezone: 'IANA time zone, e.g. Europe/Berlin.' },
});
