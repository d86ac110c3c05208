import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { TEMPLATE_COLUMNS } from '../../../cli/alerts-command.js';
import { idArg } from '../../../cli/args.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const body = bodyFlags(alertTemplates.updateTemplate);

export default class AlertsTemplatesUpdate extends ApiCommand<typeof AlertsTemplatesUpdate> {
  static override summary = 'Change a custom alert template: only the fields given (built-ins are read-only)';
  static override examples = ['<%= config.bin %> alerts templates update 7d41… --severity critical --default-cooldown-minutes 60'];
  static override args = idArg('Template');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = TEMPLATE_COLUMNS;

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return (await this.call(alertTemplates.updateTemplate, { params: { id: this.args.id }, body: patch })).data;
  }
}
