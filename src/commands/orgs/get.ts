import { getCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default getCommand(tenancy.getOrganization, 'Organization', {
  summary: 'Show an organization',
  examples: ['<%= config.bin %> orgs get 3b9e…', '<%= config.bin %> orgs get 3b9e… --output json'],
});
