import { ApiCommand } from '../../../cli/api-command.js';
import { GROUP_COLUMNS } from '../../../cli/alerts-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const filters = queryFlags(alertTemplates.correlationGroups);

export default class AlertsCorrelationsGroups extends ApiCommand<typeof AlertsCorrelationsGroups> {
  static override summary = 'Groups of correlated alerts, with a root-cause hint';
  static override examples = ['<%= config.bin %> alerts correlations groups', '<%= config.bin %> alerts correlations groups --org-id 3b9e… -o json'];
  static override flags = { ...filters.flags };
  static override columns = GROUP_COLUMNS;

  async run() {
    return (await this.call(alertTemplates.correlationGroups, { query: this.queryFrom(filters) })).data;
  }
}
