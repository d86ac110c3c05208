import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { RULE_COLUMNS } from '../../../cli/alerts-command.js';
import { idArg } from '../../../cli/args.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const body = bodyFlags(alertTemplates.toggleRule);

export default class AlertsRulesToggle extends ApiCommand<typeof AlertsRulesToggle> {
  static override summary = 'Enable (--enabled) or disable (--no-enabled) an alert rule';
  static override examples = ['<%= config.bin %> alerts rules toggle 7d41… --no-enabled', '<%= config.bin %> alerts rules toggle 7d41… --enabled'];
  static override args = idArg('Rule');
  static override flags = { ...body.flags, ...mutationFlags };
  static override columns = RULE_COLUMNS;

  async run() {
    return (await this.call(alertTemplates.toggleRule, { params: { id: this.args.id }, body: await this.bodyFrom(body) })).data;
  }
}
