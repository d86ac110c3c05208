import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsMonitoringTest extends ApiCommand<typeof IntegrationsMonitoringTest> {
  static override summary = 'POST a test event to the monitoring endpoint with its API key and report the answer';
  static override examples = ['<%= config.bin %> integrations monitoring test --org-id 3b9e…'];
  static override flags = { ...orgFlag, ...mutationFlags };

  async run() {
    return this.call(integrations.testMonitoring, { query: orgQuery(this.flags), body: {} });
  }
}
