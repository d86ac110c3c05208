import { getCommand } from '../../cli/resource-commands.js';
import { audit } from '../../client/endpoints.js';

export default getCommand(audit.get, 'Audit entry', {
  summary: 'Show one audit log entry',
  examples: ['<%= config.bin %> audit get 0c4f…', '<%= config.bin %> audit get 0c4f… --output json'],
});
