import { GROUP_COLUMNS } from '../../../cli/alerts-command.js';
import { queryCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default queryCommand(alertTemplates.correlationGroups, {
  summary: 'Groups of correlated alerts, with a root-cause hint',
  examples: ['<%= config.bin %> alerts correlations groups', '<%= config.bin %> alerts correlations groups --org-id 3b9e… -o json'],
  columns: GROUP_COLUMNS,
  pick: (answer) => answer.data,
});
