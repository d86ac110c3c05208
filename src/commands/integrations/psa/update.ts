import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Flags } from '../../../cli/flags.js';
import { NO_FIELDS, configFileFlag, given, orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsPsaUpdate extends ApiCommand<typeof IntegrationsPsaUpdate> {
  static override summary = 'Change fields of the legacy PSA settings, keeping the others (credentials from --from-file only)';
  static override examples = ['<%= config.bin %> integrations psa update --base-url https://acme.service-now.com'];
  static override flags = {
    ...orgFlag,
    provider: Flags.string({ summary: 'PSA provider.', options: ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'] }),
    'base-url': Flags.string({ summary: 'HTTPS base URL of the PSA.' }),
    ...configFileFlag,
    ...mutationFlags,
  };

  async run() {
    const body = { ...(await this.bodyFrom(NO_FIELDS)), ...given({ provider: this.flags.provider, baseUrl: this.flags['base-url'] }) };
    return (await this.call(integrations.updatePsa, { query: orgQuery(this.flags), body })).data;
  }
}
