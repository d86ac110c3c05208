import { orgSettingsCommand } from '../../../cli/integration-commands.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsCommand(integrations.getPsa, {
  summary: 'Show the legacy PSA settings (credentials masked); new setups use `svc psa connections`',
  examples: ['<%= config.bin %> integrations psa get --org-id 3b9e…'],
  pick: (answer) => answer.data,
});
