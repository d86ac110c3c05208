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

  const c = contract.alertChannels;
  const channels = services.alertChannels;
  route(c.list, ({ ctx, query }) => channels.list(ctx, query));
  route(c.create, ({ ctx, body }) => channels.create(ctx, body));
  route(c.get, ({ ctx, params }) => channels.get(ctx, params.id));
  route(c.update, ({ ctx, params, body }) => channels.update(ctx, params.id, body));
  route(c.delete, ({ ctx, params }) => channels.delete(ctx, params.id));
  route(c.test, ({ ctx, params }) => channels.test(ctx, params.id));

  const p = contract.alertPolicies;
  const policies = services.escalationPolicies;
  route(p.list, ({ ctx, query }) => policies.list(ctx, query));
  route(p.create, ({ ctx, body }) => policies.create(ctx, body));
  route(p.get, ({ ctx, params }) => policies.get(ctx, params.id));
  route(p.update, ({ ctx, params, body }) => policies.update(ctx, params.id, body));
  route(p.delete, ({ ctx, params }) => policies.delete(ctx, params.id));
}
