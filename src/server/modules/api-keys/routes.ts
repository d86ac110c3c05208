import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerApiKeyRoutes({ route, services, worker }: ModuleContext): void {
  bindCalls(route, contract.apiKeys, services.apiKeys, ['list', 'create', 'get', 'update', 'revoke', 'rotate']);

  // The rate window keeps one row per admitted request for an hour; older rows are dropped every minute.
  worker.every('api-keys.prune-rate-window', 60_000, () => {
    services.apiKeyAuth.limiter.prune();
  });
}
