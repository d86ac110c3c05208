import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerWebhookRoutes({ route, services }: ModuleContext): void {
  const w = contract.webhooks;
  const hooks = services.webhooks;
  bindCalls(route, w, hooks, ['list', 'create', 'get', 'update', 'delete', 'deliveries', 'test', 'rotateSecret']);
  route(w.retry, ({ ctx, params }) => hooks.retry(ctx, params.id, params.deliveryId));
}
