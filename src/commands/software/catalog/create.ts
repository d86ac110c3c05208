import { createCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { CATALOG_COLUMNS } from '../../../cli/software-columns.js';

export default createCommand(software.createCatalogItem, {
  summary: 'Add a software catalog item (needs a session with MFA); a system administrator adds it for every tenant',
  examples: [
    '<%= config.bin %> software catalog create --name 7-Zip --vendor "Igor Pavlov" --category compression --platforms windows',
    '<%= config.bin %> software catalog create --from-file chrome.yaml --org-id 3b9e…',
  ],
  columns: CATALOG_COLUMNS,
  pick: (answer) => answer.data,
});
