import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerAccessReviewRoutes({ route, services }: ModuleContext): void {
  const r = contract.accessReviews;
  const { accessReviews } = services;
  route(r.list, ({ ctx }) => accessReviews.list(ctx));
  route(r.create, ({ ctx, body }) => accessReviews.create(ctx, body));
  route(r.get, ({ ctx, params }) => accessReviews.get(ctx, params.id));
  route(r.updateItem, ({ ctx, params, body }) => accessReviews.updateItem(ctx, params.id, params.itemId, body));
  route(r.complete, ({ ctx, params }) => accessReviews.complete(ctx, params.id));
}
