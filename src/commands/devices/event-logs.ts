import { childListCommand } from '../../cli/resource-commands.js';
import { deviceLogs } from '../../client/endpoints.js';

export default childListCommand(deviceLogs.events, 'Device', {
  summary: "List a device's OS event log as its agent reported it, newest first",
  examples: [
    '<%= config.bin %> devices event-logs 0d3f…',
    '<%= config.bin %> devices event-logs 0d3f… --category security --level critical --start-date 2026-01-01',
    '<%= config.bin %> devices event-logs 0d3f… --source disk --all --output csv > events.csv',
  ],
  columns: ['timestamp', 'level', 'category', 'source', 'eventId', 'message'],
});
