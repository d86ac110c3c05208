import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Flags } from '../../../cli/flags.js';
import { NO_FIELDS, configFileFlag, given, orgFlag, orgQuery, secretField, secretFieldFlags } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsMonitoringUpdate extends ApiCommand<typeof IntegrationsMonitoringUpdate> {
  static override summary = 'Replace the monitoring settings: endpoint, API key, metrics and event forwarding (needs MFA)';
  static override description = 'The API key is a secret: --api-key-stdin or --api-key-file (or inside --from-file).';
  static override examples = [
    'printf %s "$KEY" | <%= config.bin %> integrations monitoring update --org-id 3b9e… --endpoint https://metrics.example.com/ingest --api-key-stdin --metrics-enabled',
  ];
  static override flags = {
    ...orgFlag,
    endpoint: Flags.string({ summary: 'HTTPS URL events and metrics are sent to.' }),
    ...secretFieldFlags('api-key', 'API key'),
    'metrics-enabled': Flags.boolean({ summary: 'Send metrics.', allowNo: true }),
    'forward-events': Flags.boolean({ summary: 'Forward events.', allowNo: true }),
    ...configFileFlag,
    ...mutationFlags,
  };

  async run() {
    const flags = this.flags as Record<string, unknown>;
    const body = { ...(await this.bodyFrom(NO_FIELDS)), ...given({
      endpoint: this.flags.endpoint,
      apiKey: await secretField(flags, 'api-key'),
      metricsEnabled: this.flags['metrics-enabled'],
      forwardEvents: this.flags['forward-events'],
    }) };
    return (await this.call(integrations.putMonitoring, { query: orgQuery(this.flags), body })).data;
  }
}
