import { queryCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { CATALOG_COLUMNS } from '../../../cli/software-columns.js';

export default queryCommand(software.searchCatalog, {
  summary: 'Search the software catalog by name, vendor, description or tag (at most 100 matches)',
  examples: ['<%= config.bin %> software catalog search --q chrome', '<%= config.bin %> software catalog search --q pdf --category productivity -o json'],
  columns: CATALOG_COLUMNS,
  pick: (answer) => answer.data,
});
