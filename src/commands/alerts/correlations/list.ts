import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { LINK_COLUMNS, flatPage } from '../../../cli/alerts-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const filters = queryFlags(alertTemplates.listCorrelations, { omit: ['page', 'limit'] });

export default class AlertsCorrelationsList extends ApiCommand<typeof AlertsCorrelationsList> {
  static override summary = 'List correlation links between alerts, newest first';
  static override examples = ['<%= config.bin %> alerts correlations list --min-confidence 0.7', '<%= config.bin %> alerts correlations list --alert-id 2a7c…'];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = LINK_COLUMNS;

  async run() {
    return this.list(alertTemplates.listCorrelations, { query: this.queryFrom(filters) }, flatPage);
  }
}
