import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { alerts } from '../../client/endpoints.js';

const filters = queryFlags(alerts.summary);

export default class AlertsSummary extends ApiCommand<typeof AlertsSummary> {
  static override summary = 'Count alerts by severity (active ones) and by status';
  static override examples = ['<%= config.bin %> alerts summary', '<%= config.bin %> alerts summary --org-id 3b9e… --output json'];
  static override flags = { ...filters.flags };

  async run() {
    const answer = await this.call(alerts.summary, { query: this.queryFrom(filters) });
    if (this.format !== 'table' && this.format !== 'csv') return answer;
    // A table: one row per count.
    return [
      ...Object.entries(answer.bySeverity).map(([name, count]) => ({ group: 'active by severity', name, count })),
      ...Object.entries(answer.byStatus).map(([name, count]) => ({ group: 'by status', name, count })),
      { group: 'total', name: 'all', count: answer.total },
    ];
  }
}
