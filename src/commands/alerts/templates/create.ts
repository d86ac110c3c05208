import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { TEMPLATE_COLUMNS } from '../../../cli/alerts-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const body = bodyFlags(alertTemplates.createTemplate);

export default class AlertsTemplatesCreate extends ApiCommand<typeof AlertsTemplatesCreate> {
  static override summary = 'Create a custom alert template (needs a session with MFA)';
  static override examples = [
    `<%= config.bin %> alerts templates create --name "DB CPU" --severity high --conditions '{"metric":"cpu.usage","operator":">","threshold":80,"durationMinutes":10}'`,
    '<%= config.bin %> alerts templates create --from-file template.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = TEMPLATE_COLUMNS;

  async run() {
    return (await this.call(alertTemplates.createTemplate, { body: await this.bodyFrom(body) })).data;
  }
}
