import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.testPsa, {
  summary: 'Call the legacy PSA base URL with its credentials and report whether they were accepted',
  examples: ['<%= config.bin %> integrations psa test --org-id 3b9e…'],
});
