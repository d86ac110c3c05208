import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerFilterRoutes({ route, services }: ModuleContext): void {
  const f = contract.filters;
  const filters = services.filters;
  route(f.list, ({ ctx, query }) => filters.list(ctx, query));
  route(f.create, ({ ctx, body }) => filters.create(ctx, body));
  route(f.preview, ({ ctx, query, body }) => filters.preview(ctx, body.conditions, { orgId: query.orgId, limit: body.limit, idsOnly: body.idsOnly }));
  route(f.get, ({ ctx, params }) => filters.get(ctx, params.id));
  route(f.update, ({ ctx, params, body }) => filters.update(ctx, params.id, body));
  route(f.delete, ({ ctx, params }) => filters.delete(ctx, params.id));
  route(f.previewSaved, ({ ctx, params, query }) => filters.previewSaved(ctx, params.id, { limit: query.limit, idsOnly: query.idsOnly }));
}
