import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.getTicketing, {
  summary: 'Show the ticketing settings of an organization (API key masked; {} when none)',
  examples: ['<%= config.bin %> integrations ticketing get --org-id 3b9e…'],
});
