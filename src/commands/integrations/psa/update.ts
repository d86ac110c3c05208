import { orgSettingsSaveCommand } from '../../../cli/integration-commands.js';
import { Flags } from '../../../cli/flags.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsSaveCommand(
  integrations.updatePsa,
  {
    provider: Flags.string({ summary: 'PSA provider.', options: ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'] }),
    'base-url': Flags.string({ summary: 'HTTPS base URL of the PSA.' }),
  },
  {
    summary: 'Change fields of the legacy PSA settings, keeping the others (credentials from --from-file only)',
    examples: ['<%= config.bin %> integrations psa update --base-url https://acme.service-now.com'],
    pick: (answer) => answer.data,
  },
);
