import { POLICY_COLUMNS } from '../../../cli/alert-columns.js';
import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { alertPolicies } from '../../../client/endpoints.js';

const def = alertPolicies.list;
const filters = queryFlags(def, { omit: ['page', 'limit'] });

export default class AlertsPoliciesList extends ApiCommand<typeof AlertsPoliciesList> {
  static override summary = 'List escalation policies, most recently updated first';
  static override examples = [
    '<%= config.bin %> alerts policies list',
    '<%= config.bin %> alerts policies list --org-id 3b9e…',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = POLICY_COLUMNS;

  async run() {
    return this.list(def, { query: this.queryFrom(filters) });
  }
}
