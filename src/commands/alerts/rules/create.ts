import { createCommand } from '../../../cli/resource-commands.js';
import { RULE_COLUMNS } from '../../../cli/alerts-command.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default createCommand(alertTemplates.createRule, {
  summary: "Create an alert rule from a template; omitted fields inherit the template's (needs a session with MFA)",
  examples: [
    '<%= config.bin %> alerts rules create --template-id 00000000-0000-4000-a000-000000000001 --name "CPU on servers"',
    `<%= config.bin %> alerts rules create --template-id 00000000-0000-4000-a000-000000000002 --name "Disk HQ" --targets '{"scope":"site","siteIds":["5d0a…"]}'`,
    '<%= config.bin %> alerts rules create --from-file rule.yaml',
  ],
  columns: RULE_COLUMNS,
  pick: (answer) => answer.data,
});
