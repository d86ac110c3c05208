import { updateCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { CATALOG_COLUMNS } from '../../../cli/software-columns.js';

export default updateCommand(software.updateCatalogItem, 'Catalog item', {
  summary: 'Change a software catalog item: only the fields given (needs a session with MFA)',
  examples: ['<%= config.bin %> software catalog update 7d41… --deprecated', '<%= config.bin %> software catalog update 7d41… --homepage null'],
  columns: CATALOG_COLUMNS,
  requireChange: true,
  pick: (answer) => answer.data,
});
