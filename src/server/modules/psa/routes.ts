import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerPsaRoutes({ route, services }: ModuleContext): void {
  const c = contract.psa;
  const psa = services.psa;
  route(c.list, ({ ctx, query }) => psa.list(ctx, query));
  route(c.create, ({ ctx, body }) => psa.create(ctx, body));
  route(c.get, ({ ctx, params }) => psa.get(ctx, params.id));
  route(c.update, ({ ctx, params, body }) => psa.update(ctx, params.id, body));
  route(c.delete, ({ ctx, params }) => psa.delete(ctx, params.id));
  route(c.test, ({ ctx, params }) => psa.test(ctx, params.id));
  route(c.sync, ({ ctx, params }) => psa.sync(ctx, params.id));
  route(c.status, ({ ctx, params, body }) => psa.setStatus(ctx, params.id, body));
  route(c.connectionTickets, ({ ctx, params, query }) => psa.connectionTickets(ctx, params.id, query));
  route(c.tickets, ({ ctx, query }) => psa.tickets(ctx, query));
}
