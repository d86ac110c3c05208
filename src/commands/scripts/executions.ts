import { childListCommand } from '../../cli/resource-commands.js';
import { scripts } from '../../client/endpoints.js';

export default childListCommand(scripts.executions, 'Script', {
  summary: "List a script's runs, newest first (one per device)",
  examples: ['<%= config.bin %> scripts executions 7a1c…', '<%= config.bin %> scripts executions 7a1c… --status failed -o json'],
  columns: ['id', 'deviceId', 'status', 'exitCode', 'severity', 'startedAt', 'completedAt'],
});
