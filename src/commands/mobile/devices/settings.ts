import { updateCommand } from '../../../cli/resource-commands.js';
import { mobile } from '../../../client/endpoints.js';

export default updateCommand(mobile.settings, 'registered phone', {
  summary: "Change a registered phone's push settings: on/off, severities, quiet hours",
  examples: [
    '<%= config.bin %> mobile devices settings 5f2e… --severities critical,high',
    '<%= config.bin %> mobile devices settings 5f2e… --quiet-hours \'{"start":"22:00","end":"07:00","timezone":"Europe/Berlin"}\'',
  ],
  columns: ['id', 'notificationsEnabled', 'alertSeverities', 'quietHours'],
});
