import { orgSettingsSaveCommand, secretInput } from '../../../cli/integration-commands.js';
import { Flags } from '../../../cli/flags.js';
import { integrations } from '../../../client/endpoints.js';

export default orgSettingsSaveCommand(
  integrations.putMonitoring,
  {
    endpoint: Flags.string({ summary: 'HTTPS URL events and metrics are sent to.' }),
    'api-key': secretInput('API key'),
    'metrics-enabled': Flags.boolean({ summary: 'Send metrics.', allowNo: true }),
    'forward-events': Flags.boolean({ summary: 'Forward events.', allowNo: true }),
  },
  {
    summary: 'Replace the monitoring settings: endpoint, API key, metrics and event forwarding (needs MFA)',
    description: 'The API key is a secret: --api-key-stdin or --api-key-file (or inside --from-file).',
    examples: [
      'printf %s "$KEY" | <%= config.bin %> integrations monitoring update --org-id 3b9e… --endpoint https://metrics.example.com/ingest --api-key-stdin --metrics-enabled',
    ],
    pick: (answer) => answer.data,
  },
);
