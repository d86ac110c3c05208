import { countsCommand } from '../../cli/resource-commands.js';
import { alerts } from '../../client/endpoints.js';

export default countsCommand(alerts.summary, {
  summary: 'Count alerts by severity (active ones) and by status',
  examples: ['<%= config.bin %> alerts summary', '<%= config.bin %> alerts summary --org-id 3b9e… --output json'],
  groups: (answer) => ({ 'active by severity': answer.bySeverity, 'by status': answer.byStatus, total: { all: answer.total } }),
});
