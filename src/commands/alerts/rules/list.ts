import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { RULE_COLUMNS, flatPage } from '../../../cli/alerts-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const filters = queryFlags(alertTemplates.listRules, { omit: ['page', 'limit'] });

export default class AlertsRulesList extends ApiCommand<typeof AlertsRulesList> {
  static override summary = 'List alert rules, newest first';
  static override examples = [
    '<%= config.bin %> alerts rules list --enabled true',
    '<%= config.bin %> alerts rules list --target-type site --target-value 5d0a…',
    '<%= config.bin %> alerts rules list --template-id 00000000-0000-4000-a000-000000000001 --search db',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = RULE_COLUMNS;

  async run() {
    return this.list(alertTemplates.listRules, { query: this.queryFrom(filters) }, flatPage);
  }
}
