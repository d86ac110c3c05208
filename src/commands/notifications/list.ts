import { NOTIFICATION_COLUMNS } from '../../cli/alert-columns.js';
import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { notifications } from '../../client/endpoints.js';

const filters = queryFlags(notifications.list, { omit: ['limit', 'offset'] });

export default class NotificationsList extends ApiCommand<typeof NotificationsList> {
  static override summary = 'List your in-app notifications, newest first';
  static override examples = [
    '<%= config.bin %> notifications list',
    '<%= config.bin %> notifications list --unread-only true --type alert',
    '<%= config.bin %> notifications list --limit 20 --page 2 --output json',
    '<%= config.bin %> notifications list --all --output csv > notifications.csv',
  ];
  static override flags = { ...filters.flags, ...listFlags };
  static override columns = NOTIFICATION_COLUMNS;

  async run() {
    return this.listByOffset(notifications.list, { query: this.queryFrom(filters) }, (answer) => ({ data: answer.notifications, total: answer.total }));
  }
}
