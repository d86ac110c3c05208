import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerRoleRoutes({ route, services }: ModuleContext): void {
  const r = contract.roles;
  const { roles } = services;
  route(r.list, ({ ctx }) => roles.list(ctx));
  route(r.create, ({ ctx, body }) => roles.create(ctx, body));
  route(r.availablePermissions, () => roles.availablePermissions());
  route(r.get, ({ ctx, params }) => roles.get(ctx, params.id));
  route(r.update, ({ ctx, params, body }) => roles.update(ctx, params.id, body));
  route(r.delete, ({ ctx, params }) => roles.delete(ctx, params.id));
  route(r.clone, ({ ctx, params, body }) => roles.clone(ctx, params.id, body));
  route(r.users, ({ ctx, params }) => roles.users(ctx, params.id));
  route(r.effectivePermissions, ({ ctx, params }) => roles.effectivePermissions(ctx, params.id));
}
