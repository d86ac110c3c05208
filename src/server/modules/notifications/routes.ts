import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerNotificationRoutes({ route, services }: ModuleContext): void {
  bindCalls(route, contract.notifications, services.inbox, ['list', 'unreadCount', 'mark', 'delete', 'deleteAll']);
  const crud = ['list', 'create', 'get', 'update', 'delete'] as const;
  bindCalls(route, contract.alertChannels, services.alertChannels, [...crud, 'test']);
  bindCalls(route, contract.alertPolicies, services.escalationPolicies, crud);
}
