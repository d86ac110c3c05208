import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsPsaTest extends ApiCommand<typeof IntegrationsPsaTest> {
  static override summary = 'Call the legacy PSA base URL with its credentials and report whether they were accepted';
  static override examples = ['<%= config.bin %> integrations psa test --org-id 3b9e…'];
  static override flags = { ...orgFlag, ...mutationFlags };

  async run() {
    return this.call(integrations.testPsa, { query: orgQuery(this.flags), body: {} });
  }
}
