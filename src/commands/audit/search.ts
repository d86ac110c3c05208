import { listCommand } from '../../cli/resource-commands.js';
import { AUDIT_COLUMNS, auditFilterDescriptions } from '../../cli/audit.js';
import { audit } from '../../client/endpoints.js';

export default listCommand(audit.search, {
  summary: 'Search audit log entries by text, with the same filters as `audit list`',
  examples: [
    '<%= config.bin %> audit search --q partner',
    '<%= config.bin %> audit search --q "Acme" --from 2026-01-01T00:00:00Z --all --output csv > hits.csv',
  ],
  columns: AUDIT_COLUMNS,
  descriptions: {
    ...auditFilterDescriptions,
    q: 'Text to find in the action, actor e-mail, resource type, resource name and details.',
  },
});
