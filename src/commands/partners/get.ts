import { getCommand } from '../../cli/resource-commands.js';
import { tenancy } from '../../client/endpoints.js';

export default getCommand(tenancy.getPartner, 'Partner', {
  summary: 'Show a partner',
  examples: ['<%= config.bin %> partners get 7f1c…', '<%= config.bin %> partners get 7f1c… --output json'],
});
