import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';

export function registerUserRoutes({ route, services }: ModuleContext): void {
  const u = contract.users;
  const { users, roles } = services;
  bindCalls(route, u, users, ['list', 'invite', 'resendInvite', 'get', 'update', 'remove']);
  route(u.listRoles, ({ ctx }) => roles.listForAssignment(ctx));
  route(u.assignRole, ({ ctx, params, body }) => users.assignRole(ctx, params.id, body.roleId));
  route(u.resetPassword, ({ ctx, params }) => users.issuePasswordReset(ctx, params.id));
}
