import { orgSettingsSaveCommand, secretInput } from '../../../cli/integration-commands.js';
import { Flags } from '../../../cli/flags.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsSaveCommand(
  integrations.saveTicketing,
  {
    provider: Flags.string({ summary: 'Ticketing system (free text, e.g. jira).' }),
    'api-url': Flags.string({ summary: 'HTTPS URL of the ticketing API (the test GETs it).' }),
    'api-key': secretInput('API key'),
    'project-key': Flags.string({ summary: 'Project tickets are opened in.' }),
    'auto-create': Flags.boolean({ summary: 'Open tickets for alerts automatically.', allowNo: true }),
  },
  {
    summary: 'Replace the ticketing settings: provider, API URL and key, project, auto-create (needs MFA)',
    description: 'The API key is a secret: --api-key-stdin or --api-key-file (or inside --from-file).',
    examples: [
      'printf %s "$KEY" | <%= config.bin %> integrations ticketing update --org-id 3b9e… --provider jira --api-url https://acme.atlassian.net/rest/api/2/myself --api-key-stdin --project-key OPS --auto-create',
    ],
  },
);
