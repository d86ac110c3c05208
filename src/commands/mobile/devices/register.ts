import { createCommand } from '../../../cli/resource-commands.js';
import { mobile } from '../../../client/endpoints.js';

export default createCommand(mobile.registerDevice, {
  summary: 'Register a phone for push notifications (again: updates it)',
  examples: [
    '<%= config.bin %> mobile devices register --device-id phone-1 --platform android --fcm-token f1…',
    '<%= config.bin %> mobile devices register --device-id phone-2 --platform ios --apns-token a9…',
  ],
  columns: ['id', 'deviceId', 'platform', 'notificationsEnabled', 'alertSeverities', 'lastActiveAt'],
  quietField: 'id',
});
