import { ApiCommand } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsPsaGet extends ApiCommand<typeof IntegrationsPsaGet> {
  static override summary = 'Show the legacy PSA settings (credentials masked); new setups use `svc psa connections`';
  static override examples = ['<%= config.bin %> integrations psa get --org-id 3b9e…'];
  static override flags = { ...orgFlag };

  async run() {
    return (await this.call(integrations.getPsa, { query: orgQuery(this.flags) })).data;
  }
}
