import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { queryCommand } from '../../../cli/resource-commands.js';
import { pam } from '../../../client/endpoints.js';

export default queryCommand(pam.listRules, {
  summary: 'List elevation rules, in the order the engine tries them (priority, then creation time)',
  examples: [
    '<%= config.bin %> pam rules list',
    '<%= config.bin %> pam rules list --org-id 3b9e… --output json',
    '<%= config.bin %> pam rules list --site-id 5c1a… --columns id,name,verdict,matchHash',
  ],
  columns: RULE_COLUMNS,
  pick: (answer) => answer.rules,
});
