import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Flags } from '../../../cli/flags.js';
import { NO_FIELDS, configFileFlag, given, orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsPsaCreate extends ApiCommand<typeof IntegrationsPsaCreate> {
  static override summary = 'Replace the legacy PSA settings (credentials from --from-file only); new setups use `svc psa connections`';
  static override examples = ['<%= config.bin %> integrations psa create --org-id 3b9e… --from-file psa.yaml', '<%= config.bin %> integrations psa create --from-file - < psa.json'];
  static override flags = {
    ...orgFlag,
    provider: Flags.string({ summary: 'PSA provider.', options: ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'] }),
    'base-url': Flags.string({ summary: 'HTTPS base URL of the PSA (the test GETs it).' }),
    ...configFileFlag,
    ...mutationFlags,
  };

  async run() {
    const body = { ...(await this.bodyFrom(NO_FIELDS)), ...given({ provider: this.flags.provider, baseUrl: this.flags['base-url'] }) };
    return (await this.call(integrations.savePsa, { query: orgQuery(this.flags), body })).data;
  }
}
