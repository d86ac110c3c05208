import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default class AlertsTemplatesDelete extends ApiCommand<typeof AlertsTemplatesDelete> {
  static override summary = 'Delete a custom alert template that no rule uses';
  static override examples = ['<%= config.bin %> alerts templates delete 7d41… --yes'];
  static override args = idArg('Template');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete alert template ${this.args.id}?`);
    return (await this.call(alertTemplates.deleteTemplate, { params: { id: this.args.id } })).data;
  }
}
