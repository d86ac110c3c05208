import { NOTIFICATION_COLUMNS } from '../../cli/alert-columns.js';
import { ApiCommand } from '../../cli/api-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { notifications } from '../../client/endpoints.js';

const def = notifications.list;
const filters = queryFlags(def);

export default class NotificationsList extends ApiCommand<typeof NotificationsList> {
  static override summary = 'List your in-app notifications, newest first';
  static override examples = [
    '<%= config.bin %> notifications list',
    '<%= config.bin %> notifications list --unread-only true --type alert',
    '<%= config.bin %> notifications list --limit 20 --offset 20 --output json',
  ];
  static override flags = { ...filters.flags };
  static override columns = NOTIFICATION_COLUMNS;

  async run() {
    return (await this.call(def, { query: this.queryFrom(filters) })).notifications;
  }
}
