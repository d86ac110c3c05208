import { CHANNEL_COLUMNS } from '../../../cli/alert-columns.js';
import { updateCommand } from '../../../cli/resource-commands.js';
import { alertChannels } from '../../../client/endpoints.js';

export default updateCommand(alertChannels.update, 'Notification channel', {
  summary: 'Change a notification channel: only the fields given (needs a session with MFA)',
  examples: [
    '<%= config.bin %> alerts channels update 8c1d… --no-enabled',
    '<%= config.bin %> alerts channels update 8c1d… --throttle-max-per-window 10 --throttle-window-seconds 3600',
    '<%= config.bin %> alerts channels update 8c1d… --from-file channel.yaml',
  ],
  descriptions: {
    config: 'The whole new configuration as JSON; masked secrets ("********") sent back keep the stored ones. Put secrets in --from-file.',
    throttleMaxPerWindow: 'At most this many sends per window, 1-10000, or "null" for unlimited.',
  },
  columns: CHANNEL_COLUMNS,
  requireChange: true,
});
