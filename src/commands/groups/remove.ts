import { confirmCommand } from '../../cli/resource-commands.js';
import { groups } from '../../client/endpoints.js';

export default confirmCommand(groups.removeMember, { id: 'Group id', deviceId: 'Device id' }, {
  summary: 'Remove a device from a static group (needs a session with MFA)',
  examples: ['<%= config.bin %> groups remove 7d41… 0d3f…'],
  confirm: (id) => `Remove the device from group ${id}?`,
  pick: (answer) => answer.data,
});
