import { ApiCommand } from '../../../cli/api-command.js';
import { orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsMonitoringGet extends ApiCommand<typeof IntegrationsMonitoringGet> {
  static override summary = 'Show the monitoring settings of an organization (API key masked; {} when none)';
  static override examples = ['<%= config.bin %> integrations monitoring get --org-id 3b9e…'];
  static override flags = { ...orgFlag };

  async run() {
    return this.call(integrations.getMonitoring, { query: orgQuery(this.flags) });
  }
}
