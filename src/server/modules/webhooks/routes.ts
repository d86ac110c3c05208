import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerWebhookRoutes({ route, services }: ModuleContext): void {
  const w = contract.webhooks;
  const hooks = services.webhooks;
  route(w.list, ({ ctx, query }) => hooks.list(ctx, query));
  route(w.create, ({ ctx, body }) => hooks.create(ctx, body));
  route(w.get, ({ ctx, params }) => hooks.get(ctx, params.id));
  route(w.update, ({ ctx, params, body }) => hooks.update(ctx, params.id, body));
  route(w.delete, ({ ctx, params }) => hooks.delete(ctx, params.id));
  route(w.deliveries, ({ ctx, params, query }) => hooks.deliveries(ctx, params.id, query));
  route(w.retry, ({ ctx, params }) => hooks.retry(ctx, params.id, params.deliveryId));
  route(w.test, ({ ctx, params, body }) => hooks.test(ctx, params.id, body));
  route(w.rotateSecret, ({ ctx, params, body }) => hooks.rotateSecret(ctx, params.id, body));
}
