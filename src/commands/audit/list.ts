import { listCommand } from '../../cli/resource-commands.js';
import { AUDIT_COLUMNS, auditFilterDescriptions } from '../../cli/audit.js';
import { audit } from '../../client/endpoints.js';

export default listCommand(audit.list, {
  summary: 'List audit log entries, newest first',
  examples: [
    '<%= config.bin %> audit list',
    '<%= config.bin %> audit list --action auth.login --from 2026-01-01T00:00:00Z --all --output jsonl',
    '<%= config.bin %> audit list --user admin@example.com --org-id 3b9e… --limit 100',
  ],
  columns: AUDIT_COLUMNS,
  descriptions: auditFilterDescriptions,
});
