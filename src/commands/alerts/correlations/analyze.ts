import { bodyCommand } from '../../../cli/resource-commands.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default bodyCommand(alertTemplates.analyzeCorrelations, {
  fromFile: false,
  summary: 'Correlate the alerts of a window (same device, or the same rule across a site)',
  examples: ['<%= config.bin %> alerts correlations analyze --window-minutes 120', '<%= config.bin %> alerts correlations analyze --alert-ids 2a7c…,9f01…'],
  pick: (answer) => answer.data,
});
