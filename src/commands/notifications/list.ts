import { NOTIFICATION_COLUMNS } from '../../cli/alert-columns.js';
import { queryCommand } from '../../cli/resource-commands.js';
import { notifications } from '../../client/endpoints.js';

export default queryCommand(notifications.list, {
  summary: 'List your in-app notifications, newest first',
  examples: [
    '<%= config.bin %> notifications list',
    '<%= config.bin %> notifications list --unread-only true --type alert',
    '<%= config.bin %> notifications list --limit 20 --offset 20 --output json',
  ],
  columns: NOTIFICATION_COLUMNS,
  pick: (answer) => answer.notifications,
});
