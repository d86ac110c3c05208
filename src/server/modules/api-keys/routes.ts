import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerApiKeyRoutes({ route, services, worker }: ModuleContext): void {
  const k = contract.apiKeys;
  const apiKeys = services.apiKeys;
  route(k.list, ({ ctx, query }) => apiKeys.list(ctx, query));
  route(k.create, ({ ctx, body }) => apiKeys.create(ctx, body));
  route(k.get, ({ ctx, params }) => apiKeys.get(ctx, params.id));
  route(k.update, ({ ctx, params, body }) => apiKeys.update(ctx, params.id, body));
  route(k.revoke, ({ ctx, params }) => apiKeys.revoke(ctx, params.id));
  route(k.rotate, ({ ctx, params }) => apiKeys.rotate(ctx, params.id));

  // The rate window keeps one row per admitted request for an hour; older rows are dropped every minute.
  worker.every('api-keys.prune-rate-window', 60_000, () => {
    services.apiKeyAuth.limiter.prune();
  });
}
