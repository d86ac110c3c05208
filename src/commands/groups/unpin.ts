import { confirmCommand } from '../../cli/resource-commands.js';
import { groups } from '../../client/endpoints.js';

export default confirmCommand(groups.unpin, { id: 'Group id', deviceId: 'Device id' }, {
  summary: 'Unpin a device from a dynamic group; it stays only while the conditions match (needs a session with MFA)',
  examples: ['<%= config.bin %> groups unpin 7d41… 0d3f…'],
  pick: (answer) => answer.data,
});
