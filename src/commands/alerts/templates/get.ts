import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default class AlertsTemplatesGet extends ApiCommand<typeof AlertsTemplatesGet> {
  static override summary = 'Show an alert template';
  static override examples = ['<%= config.bin %> alerts templates get 00000000-0000-4000-a000-000000000001'];
  static override args = idArg('Template');

  async run() {
    return (await this.call(alertTemplates.getTemplate, { params: { id: this.args.id } })).data;
  }
}
