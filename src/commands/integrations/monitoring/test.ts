import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.testMonitoring, {
  summary: 'POST a test event to the monitoring endpoint with its API key and report the answer',
  examples: ['<%= config.bin %> integrations monitoring test --org-id 3b9e…'],
});
