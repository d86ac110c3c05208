import { listCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { CATALOG_COLUMNS } from '../../../cli/software-columns.js';

export default listCommand(software.listCatalog, {
  summary: 'List the software catalog items you can see, by name',
  examples: [
    '<%= config.bin %> software catalog list',
    '<%= config.bin %> software catalog list --category browser --platform windows',
    '<%= config.bin %> software catalog list --search zip --all -o csv > catalog.csv',
  ],
  omit: ['q'],
  columns: CATALOG_COLUMNS,
});
