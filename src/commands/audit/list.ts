import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { AUDIT_COLUMNS, auditFilterDescriptions } from '../../cli/audit.js';
import { audit } from '../../client/endpoints.js';

const def = audit.list;
const filters = queryFlags(def, { omit: ['page', 'limit'], descriptions: auditFilterDescriptions });

export default class AuditList extends ApiCommand<typeof AuditList> {
  static override summary = 'List audit log entries, newest first';
  static override examples = [
    '<%= config.bin %> audit list',
    '<%= config.bin %> audit list --action auth.login --from 2026-01-01T00:00:00Z --all --output jsonl',
    '<%= config.bin %> audit list --user admin@example.com --org-id 3b9e… --limit 100',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = AUDIT_COLUMNS;

  async run() {
    const query = this.queryFrom(filters);
    return this.list(audit.list, { query });
  }
}
