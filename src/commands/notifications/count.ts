import { ApiCommand } from '../../cli/api-command.js';
import { notifications } from '../../client/endpoints.js';

export default class NotificationsCount extends ApiCommand<typeof NotificationsCount> {
  static override summary = 'Count your unread in-app notifications';
  static override examples = ['<%= config.bin %> notifications count', '<%= config.bin %> notifications count --output json'];

  async run() {
    return this.call(notifications.unreadCount);
  }
}
