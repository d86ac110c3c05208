import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerUserRoutes({ route, services }: ModuleContext): void {
  const u = contract.users;
  const { users, roles } = services;
  route(u.list, ({ ctx, query }) => users.list(ctx, query));
  route(u.listRoles, ({ ctx }) => roles.listForAssignment(ctx));
  route(u.invite, ({ ctx, body }) => users.invite(ctx, body));
  route(u.resendInvite, ({ ctx, body }) => users.resendInvite(ctx, body));
  route(u.get, ({ ctx, params }) => users.get(ctx, params.id));
  route(u.update, ({ ctx, params, body }) => users.update(ctx, params.id, body));
  route(u.remove, ({ ctx, params }) => users.remove(ctx, params.id));
  route(u.assignRole, ({ ctx, params, body }) => users.assignRole(ctx, params.id, body.roleId));
  route(u.resetPassword, ({ ctx, params }) => users.issuePasswordReset(ctx, params.id));
}
