import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerEnrollmentKeyRoutes({ route, services }: ModuleContext): void {
  const k = contract.enrollmentKeys;
  const keys = services.enrollmentKeys;
  route(k.list, ({ ctx, query }) => keys.list(ctx, query));
  route(k.create, ({ ctx, body }) => keys.create(ctx, body));
  route(k.get, ({ ctx, params }) => keys.get(ctx, params.id));
  route(k.rotate, ({ ctx, params, body }) => keys.rotate(ctx, params.id, body));
  route(k.delete, ({ ctx, params }) => keys.delete(ctx, params.id));
}
