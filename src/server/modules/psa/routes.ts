import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerPsaRoutes({ route, services }: ModuleContext): void {
  const c = contract.psa;
  const psa = services.psa;
  bindCalls(route, c, psa, [
    'list',
    'create',
    'get',
    'update',
    'delete',
    'test',
    'sync',
    'connectionTickets',
    'tickets',
  ]);
  route(c.status, ({ ctx, params, body }) => psa.setStatus(ctx, params.id, body));
}
