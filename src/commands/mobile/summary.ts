import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { mobile } from '../../client/endpoints.js';

const filters = queryFlags(mobile.summary);

export default class MobileSummary extends ApiCommand<typeof MobileSummary> {
  static override summary = 'Device and alert counts, as the mobile app shows them';
  static override examples = ['<%= config.bin %> mobile summary', '<%= config.bin %> mobile summary --org-id 3b9e… --output json'];
  static override flags = { ...filters.flags };

  async run() {
    const answer = await this.call(mobile.summary, { query: this.queryFrom(filters) });
    if (this.format !== 'table' && this.format !== 'csv') return answer;
    return [
      ...Object.entries(answer.devices).map(([name, count]) => ({ group: 'devices', name, count })),
      ...Object.entries(answer.alerts).map(([name, count]) => ({ group: 'alerts', name, count })),
    ];
  }
}
