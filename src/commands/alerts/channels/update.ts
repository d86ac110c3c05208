import { CHANNEL_COLUMNS } from '../../../cli/alert-columns.js';
import { ApiCommand, updateFlags } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { UsageError } from '../../../cli/prompts.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertChannels } from '../../../client/endpoints.js';

const def = alertChannels.update;
const body = bodyFlags(def, {
  descriptions: {
    config: 'The whole new configuration as JSON; masked secrets ("********") sent back keep the stored ones. Put secrets in --from-file.',
    throttleMaxPerWindow: 'At most this many sends per window, 1-10000, or "null" for unlimited.',
  },
});

export default class AlertsChannelsUpdate extends ApiCommand<typeof AlertsChannelsUpdate> {
  static override summary = 'Change a notification channel: only the fields given (needs a session with MFA)';
  static override examples = [
    '<%= config.bin %> alerts channels update 8c1d… --no-enabled',
    '<%= config.bin %> alerts channels update 8c1d… --throttle-max-per-window 10 --throttle-window-seconds 3600',
    '<%= config.bin %> alerts channels update 8c1d… --from-file channel.yaml',
  ];
  static override args = idArg('Notification channel');
  static override flags = { ...body.flags, ...updateFlags };
  static override columns = CHANNEL_COLUMNS;

  async run() {
    const patch = await this.bodyFrom(body);
    if (Object.keys(patch).length === 0) throw new UsageError('Nothing to change: give the fields to change as flags or with --from-file');
    return this.call(def, { params: { id: this.args.id }, body: patch });
  }
}
