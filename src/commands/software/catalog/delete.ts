import { confirmCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';

export default confirmCommand(software.deleteCatalogItem, 'Catalog item', {
  summary: 'Delete a software catalog item and all its versions (needs a session with MFA)',
  examples: ['<%= config.bin %> software catalog delete 7d41… --yes'],
  confirm: (id) => `Delete catalog item ${id} and all its versions?`,
});
