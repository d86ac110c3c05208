import { queryCommand } from '../../../cli/resource-commands.js';
import { mobile } from '../../../client/endpoints.js';

export default queryCommand(mobile.pendingApprovals, {
  summary: 'Elevation requests awaiting your decision, newest first',
  examples: ['<%= config.bin %> mobile approvals list', '<%= config.bin %> mobile approvals list --limit 10 --output json'],
  columns: ['id', 'deviceHostname', 'flowType', 'targetExecutablePath', 'toolName', 'requestedAt'],
  pick: (answer) => answer.approvals,
});
