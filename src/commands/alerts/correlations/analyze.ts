import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const body = bodyFlags(alertTemplates.analyzeCorrelations);

export default class AlertsCorrelationsAnalyze extends ApiCommand<typeof AlertsCorrelationsAnalyze> {
  static override summary = 'Correlate the alerts of a window (same device, or the same rule across a site)';
  static override examples = ['<%= config.bin %> alerts correlations analyze --window-minutes 120', '<%= config.bin %> alerts correlations analyze --alert-ids 2a7c…,9f01…'];
  static override flags = { ...body.flags, ...mutationFlags };

  async run() {
    return (await this.call(alertTemplates.analyzeCorrelations, { body: await this.bodyFrom(body) })).data;
  }
}
