import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { RULE_COLUMNS } from '../../../cli/alerts-command.js';
import { idArg } from '../../../cli/args.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const body = bodyFlags(alertTemplates.updateRule);

export default class AlertsRulesUpdate extends ApiCommand<typeof AlertsRulesUpdate> {
  static override summary = 'Change an alert rule: only the fields given';
  static override examples = ['<%= config.bin %> alerts rules update 7d41… --cooldown-minutes 60 --severity critical'];
  static override args = idArg('Rule');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = RULE_COLUMNS;

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return (await this.call(alertTemplates.updateRule, { params: { id: this.args.id }, body: patch })).data;
  }
}
