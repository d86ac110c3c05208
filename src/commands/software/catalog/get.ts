import { getCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';

export default getCommand(software.getCatalogItem, 'Catalog item', {
  summary: 'Show a software catalog item with its number of versions',
  examples: ['<%= config.bin %> software catalog get 7d41…', '<%= config.bin %> software catalog get 7d41… -o json'],
  pick: (answer) => answer.data,
});
