import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerNotificationRoutes({ route, services }: ModuleContext): void {
  const n = contract.notifications;
  const inbox = services.inbox;
  route(n.list, ({ ctx, query }) => inbox.list(ctx, query));
  route(n.unreadCount, ({ ctx }) => inbox.unreadCount(ctx));
  route(n.mark, ({ ctx, body }) => inbox.mark(ctx, body));
  route(n.delete, ({ ctx, params }) => inbox.delete(ctx, params.id));
  route(n.deleteAll, ({ ctx }) => inbox.deleteAll(ctx));
}
