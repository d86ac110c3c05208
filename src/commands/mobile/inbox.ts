import { listCommand } from '../../cli/resource-commands.js';
import { mobile } from '../../client/endpoints.js';

export default listCommand(mobile.inbox, {
  summary: 'The mobile alert inbox: alerts newest first with their device',
  omit: ['cursor'],
  examples: ['<%= config.bin %> mobile inbox', '<%= config.bin %> mobile inbox --severity critical --status active'],
  columns: ['id', 'severity', 'status', 'title', 'triggeredAt'],
});
