import { listCommand } from '../../../cli/resource-commands.js';
import { RULE_COLUMNS, flatPage } from '../../../cli/alerts-command.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default listCommand(alertTemplates.listRules, {
  summary: 'List alert rules, newest first',
  examples: [
    '<%= config.bin %> alerts rules list --enabled true',
    '<%= config.bin %> alerts rules list --target-type site --target-value 5d0a…',
    '<%= config.bin %> alerts rules list --template-id 00000000-0000-4000-a000-000000000001 --search db',
  ],
  columns: RULE_COLUMNS,
  items: flatPage,
});
