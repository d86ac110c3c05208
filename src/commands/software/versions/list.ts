import { getCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { VERSION_COLUMNS } from '../../../cli/software-columns.js';

export default getCommand(software.listVersions, 'Catalog item', {
  summary: "List a catalog item's versions, newest release first",
  examples: ['<%= config.bin %> software versions list 7d41…', '<%= config.bin %> software versions list 7d41… -o json'],
  columns: VERSION_COLUMNS,
  pick: (answer) => answer.data,
});
