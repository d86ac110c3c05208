import { getCommand } from '../../cli/resource-commands.js';
import { devices } from '../../client/endpoints.js';

export default getCommand(devices.get, 'Device', {
  summary: 'Show a device',
  examples: ['<%= config.bin %> devices get 0d3f…', '<%= config.bin %> devices get 0d3f… --output json'],
});
