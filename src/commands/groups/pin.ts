import { confirmCommand } from '../../cli/resource-commands.js';
import { groups } from '../../client/endpoints.js';

export default confirmCommand(groups.pin, { id: 'Group id', deviceId: 'Device id' }, {
  summary: 'Pin a device into a dynamic group whatever its conditions say (needs a session with MFA)',
  examples: ['<%= config.bin %> groups pin 7d41… 0d3f…'],
  pick: (answer) => answer.data,
});
