import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Flags } from '../../../cli/flags.js';
import { NO_FIELDS, configFileFlag, given, orgFlag, orgQuery, secretField, secretFieldFlags } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsTicketingUpdate extends ApiCommand<typeof IntegrationsTicketingUpdate> {
  static override summary = 'Replace the ticketing settings: provider, API URL and key, project, auto-create (needs MFA)';
  static override description = 'The API key is a secret: --api-key-stdin or --api-key-file (or inside --from-file).';
  static override examples = [
    'printf %s "$KEY" | <%= config.bin %> integrations ticketing update --org-id 3b9e… --provider jira --api-url https://acme.atlassian.net/rest/api/2/myself --api-key-stdin --project-key OPS --auto-create',
  ];
  static override flags = {
    ...orgFlag,
    provider: Flags.string({ summary: 'Ticketing system (free text, e.g. jira).' }),
    'api-url': Flags.string({ summary: 'HTTPS URL of the ticketing API (the test GETs it).' }),
    ...secretFieldFlags('api-key', 'API key'),
    'project-key': Flags.string({ summary: 'Project tickets are opened in.' }),
    'auto-create': Flags.boolean({ summary: 'Open tickets for alerts automatically.', allowNo: true }),
    ...configFileFlag,
    ...mutationFlags,
  };

  async run() {
    const flags = this.flags as Record<string, unknown>;
    const body = { ...(await this.bodyFrom(NO_FIELDS)), ...given({
      provider: this.flags.provider,
      apiUrl: this.flags['api-url'],
      apiKey: await secretField(flags, 'api-key'),
      projectKey: this.flags['project-key'],
      autoCreate: this.flags['auto-create'],
    }) };
    return this.call(integrations.saveTicketing, { query: orgQuery(this.flags), body });
  }
}
