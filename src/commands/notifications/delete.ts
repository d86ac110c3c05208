import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { Args, Flags } from '../../cli/flags.js';
import { UsageError } from '../../cli/prompts.js';
import { notifications } from '../../client/endpoints.js';

export default class NotificationsDelete extends ApiCommand<typeof NotificationsDelete> {
  static override summary = 'Delete one of your in-app notifications, or all of them with --all';
  static override examples = ['<%= config.bin %> notifications delete 0f3c… --yes', '<%= config.bin %> notifications delete --all --yes'];
  static override args = { id: Args.string({ required: false, description: 'Notification id' }) };
  static override flags = { all: Flags.boolean({ summary: 'Delete every one of your notifications.' }), ...mutationFlags };

  async run() {
    const { id } = this.args;
    if (id && this.flags.all) throw new UsageError('Give a notification id or --all, not both');
    if (id) {
      await this.confirm(`Delete notification ${id}?`);
      return this.call(notifications.delete, { params: { id } });
    }
    if (!this.flags.all) throw new UsageError('Give a notification id or --all');
    await this.confirm('Delete all of your notifications?');
    return this.call(notifications.deleteAll);
  }
}
