import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { Args, Flags } from '../../cli/flags.js';
import { UsageError } from '../../cli/prompts.js';
import { notifications } from '../../client/endpoints.js';

export default class NotificationsRead extends ApiCommand<typeof NotificationsRead> {
  static override summary = 'Mark in-app notifications read (or unread with --unread): one by id, or --all';
  static override examples = [
    '<%= config.bin %> notifications read 0f3c…',
    '<%= config.bin %> notifications read --all',
    '<%= config.bin %> notifications read 0f3c… --unread',
  ];
  static override args = { id: Args.string({ required: false, description: 'Notification id' }) };
  static override flags = {
    all: Flags.boolean({ summary: 'Mark every one of your notifications.' }),
    unread: Flags.boolean({ summary: 'Mark unread instead of read.' }),
    ...mutationFlags,
  };

  async run() {
    const { id } = this.args;
    if (!id && !this.flags.all) throw new UsageError('Give a notification id or --all');
    if (id && this.flags.all) throw new UsageError('Give a notification id or --all, not both');
    return this.call(notifications.mark, { body: { ...(id ? { ids: [id] } : { all: true }), read: !this.flags.unread } });
  }
}
