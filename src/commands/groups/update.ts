import { updateCommand } from '../../cli/resource-commands.js';
import { groups } from '../../client/endpoints.js';

export default updateCommand(groups.update, 'Group', {
  summary: "Change a device group; new conditions re-evaluate a dynamic group's members (needs a session with MFA)",
  examples: ['<%= config.bin %> groups update 7d41… --name "Web servers"'],
  columns: ['id', 'name', 'type', 'orgId', 'siteId', 'deviceCount', 'parentId', 'updatedAt'],
  requireChange: 'Nothing to change',
  pick: (answer) => answer.data,
});
