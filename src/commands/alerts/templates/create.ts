import { createCommand } from '../../../cli/resource-commands.js';
import { TEMPLATE_COLUMNS } from '../../../cli/alerts-command.js';
import { alertTemplates } from '../../../client/endpoints.js';

export default createCommand(alertTemplates.createTemplate, {
  summary: 'Create a custom alert template (needs a session with MFA)',
  examples: [
    `<%= config.bin %> alerts templates create --name "DB CPU" --severity high --conditions '{"metric":"cpu.usage","operator":">","threshold":80,"durationMinutes":10}'`,
    '<%= config.bin %> alerts templates create --from-file template.yaml',
  ],
  columns: TEMPLATE_COLUMNS,
  pick: (answer) => answer.data,
});
