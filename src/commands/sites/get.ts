import { getCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default getCommand(tenancy.getSite, 'Site', {
  summary: 'Show a site',
  examples: ['<%= config.bin %> sites get 5d0a…', '<%= config.bin %> sites get 5d0a… --output yaml'],
});
