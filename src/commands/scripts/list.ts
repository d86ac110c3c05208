import { listCommand } from '../../cli/resource-commands.js';
import { scripts } from '../../client/endpoints.js';

export default listCommand(scripts.list, {
  summary: 'List scripts, most recently updated first',
  examples: ['<%= config.bin %> scripts list', '<%= config.bin %> scripts list --os-type linux --include-system true'],
  columns: ['id', 'name', 'language', 'osTypes', 'category', 'isSystem', 'version', 'updatedAt'],
});
