import { bodyField, orgSettingsSaveCommand } from '../../../cli/integration-commands.js';
import { Flags } from '../../../cli/flags.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsSaveCommand(
  integrations.savePsa,
  {
    provider: Flags.string({ summary: 'PSA provider.', options: ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'] }),
    'psa-url': bodyField('baseUrl', Flags.string({ summary: "HTTPS base URL of the PSA (the test GETs it); the body's baseUrl." })),
  },
  {
    summary: 'Replace the legacy PSA settings (credentials from --from-file only); new setups use `svc psa connections`',
    examples: ['<%= config.bin %> integrations psa create --org-id 3b9e… --from-file psa.yaml', '<%= config.bin %> integrations psa create --from-file - < psa.json'],
    pick: (answer) => answer.data,
  },
);
