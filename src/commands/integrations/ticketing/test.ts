import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.testTicketing, {
  summary: 'Call the ticketing API URL with the stored API key and report whether it was accepted',
  examples: ['<%= config.bin %> integrations ticketing test --org-id 3b9e…'],
});
