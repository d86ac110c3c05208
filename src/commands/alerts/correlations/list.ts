import { listCommand } from '../../../cli/resource-commands.js';
import { LINK_COLUMNS, flatPage } from '../../../cli/alerts-command.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default listCommand(alertTemplates.listCorrelations, {
  summary: 'List correlation links between alerts, newest first',
  examples: [
    '<%= config.bin %> alerts correlations list --min-confidence 0.7',
    '<%= config.bin %> alerts correlations list --alert-id 2a7c…',
  ],
  columns: LINK_COLUMNS,
  items: flatPage,
});
