import { bodyField, orgSettingsSaveCommand } from '../../../cli/integration-commands.js';
import { Flags } from '../../../cli/flags.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsSaveCommand(
  integrations.updatePsa,
  {
    provider: Flags.string({ summary: 'PSA provider.', options: ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'] }),
    'psa-url': bodyField('baseUrl', Flags.string({ summary: "HTTPS base URL of the PSA; the body's baseUrl." })),
  },
  {
    summary: 'Change fields of the legacy PSA settings, keeping the others (credentials from --from-file only)',
    examples: ['<%= config.bin %> integrations psa update --psa-url https://acme.service-now.com'],
    pick: (answer) => answer.data,
  },
);
