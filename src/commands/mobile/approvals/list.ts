import { ApiCommand } from '../../../cli/api-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { mobile } from '../../../client/endpoints.js';

const filters = queryFlags(mobile.pendingApprovals);

export default class MobileApprovalsList extends ApiCommand<typeof MobileApprovalsList> {
  static override summary = 'Elevation requests awaiting your decision, newest first';
  static override examples = ['<%= config.bin %> mobile approvals list', '<%= config.bin %> mobile approvals list --limit 10 --output json'];
  static override flags = { ...filters.flags };
  static override columns = ['id', 'deviceHostname', 'flowType', 'targetExecutablePath', 'toolName', 'requestedAt'];

  async run() {
    return (await this.call(mobile.pendingApprovals, { query: this.queryFrom(filters) })).approvals;
  }
}
