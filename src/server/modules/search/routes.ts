import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerSearchRoutes({ route, services }: ModuleContext): void {
  route(contract.search.search, ({ ctx, query }) => services.search.search(ctx, query.q, query.limit));
}
