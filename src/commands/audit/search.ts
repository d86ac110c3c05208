import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { AUDIT_COLUMNS, auditFilterDescriptions } from '../../cli/audit.js';
import { audit } from '../../client/endpoints.js';

const def = audit.search;
const filters = queryFlags(def, {
  omit: ['page', 'limit'],
  descriptions: { ...auditFilterDescriptions, q: 'Text to find in the action, actor e-mail, resource type, resource name and details.' },
});

export default class AuditSearch extends ApiCommand<typeof AuditSearch> {
  static override summary = 'Search audit log entries by text, with the same filters as `audit list`';
  static override examples = [
    '<%= config.bin %> audit search --q partner',
    '<%= config.bin %> audit search --q "Acme" --from 2026-01-01T00:00:00Z --all --output csv > hits.csv',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = AUDIT_COLUMNS;

  async run() {
    const query = this.queryFrom(filters);
    return this.list(audit.search, { query });
  }
}
