import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.getMonitoring, {
  summary: 'Show the monitoring settings of an organization (API key masked; {} when none)',
  examples: ['<%= config.bin %> integrations monitoring get --org-id 3b9e…'],
});
