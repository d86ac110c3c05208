import { childListCommand } from '../../cli/resource-commands.js';
import { deviceLogs } from '../../client/endpoints.js';

export default childListCommand(deviceLogs.diagnosticLogs, 'Device', {
  summary: "List a device's agent diagnostic log, newest first",
  examples: [
    '<%= config.bin %> devices diagnostic-logs 0d3f…',
    '<%= config.bin %> devices diagnostic-logs 0d3f… --level warn,error --component patching --since 2026-01-01T00:00:00Z',
    '<%= config.bin %> devices diagnostic-logs 0d3f… --search timeout --all --output jsonl',
  ],
  columns: ['timestamp', 'level', 'component', 'message', 'agentVersion'],
  // The answer is {logs, total, limit, offset}: the page in the shape --all follows.
  items: (answer) => ({ data: answer.logs, pagination: { page: Math.floor(answer.offset / answer.limit) + 1, limit: answer.limit, total: answer.total } }),
});
