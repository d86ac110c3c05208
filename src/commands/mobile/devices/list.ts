import { listCommand } from '../../../cli/resource-commands.js';
import { mobile } from '../../../client/endpoints.js';

export default listCommand(mobile.devices, {
  summary: 'List managed devices as the mobile app shows them, last seen first',
  omit: ['cursor'],
  examples: ['<%= config.bin %> mobile devices list', '<%= config.bin %> mobile devices list --search web --status online'],
  columns: ['id', 'hostname', 'osType', 'status', 'lastSeenAt', 'orgId'],
});
