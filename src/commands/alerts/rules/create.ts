import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { RULE_COLUMNS } from '../../../cli/alerts-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const body = bodyFlags(alertTemplates.createRule);

export default class AlertsRulesCreate extends ApiCommand<typeof AlertsRulesCreate> {
  static override summary = "Create an alert rule from a template; omitted fields inherit the template's (needs a session with MFA)";
  static override examples = [
    '<%= config.bin %> alerts rules create --template-id 00000000-0000-4000-a000-000000000001 --name "CPU on servers"',
    `<%= config.bin %> alerts rules create --template-id 00000000-0000-4000-a000-000000000002 --name "Disk HQ" --targets '{"scope":"site","siteIds":["5d0a…"]}'`,
    '<%= config.bin %> alerts rules create --from-file rule.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = RULE_COLUMNS;

  async run() {
    return (await this.call(alertTemplates.createRule, { body: await this.bodyFrom(body) })).data;
  }
}
