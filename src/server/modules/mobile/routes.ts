import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerMobileRoutes({ route, services }: ModuleContext): void {
  const m = contract.mobile;
  const { registration, inbox, actions, approvals } = services.mobile;
  route(m.registerToken, ({ ctx, body }) => registration.registerToken(ctx, body));
  route(m.unregisterToken, ({ ctx, body }) => registration.unregisterToken(ctx, body.token));
  route(m.registerDevice, ({ ctx, body }) => registration.registerDevice(ctx, body));
  route(m.settings, ({ ctx, params, body }) => registration.settings(ctx, params.id, body));
  route(m.removeDevice, ({ ctx, params }) => registration.remove(ctx, params.id));
  route(m.inbox, ({ ctx, query }) => inbox.inbox(ctx, query));
  route(m.acknowledge, ({ ctx, params }) => inbox.acknowledge(ctx, params.id));
  route(m.resolve, ({ ctx, params, body }) => inbox.resolve(ctx, params.id, body.note));
  route(m.devices, ({ ctx, query }) => inbox.devicesList(ctx, query));
  route(m.metrics, ({ ctx, params }) => inbox.metrics(ctx, params.id));
  route(m.summary, ({ ctx, query }) => inbox.summary(ctx, query.orgId));
  route(m.action, ({ ctx, params, body, reply }) => {
    const { status, body: out } = actions.run(ctx, params.id, body);
    void reply.code(status);
    return out;
  });
  route(m.pendingApprovals, ({ ctx, query }) => approvals.list(ctx, query.limit, query.cursor));
  route(m.pendingApprovalCount, ({ ctx }) => approvals.count(ctx));
  route(m.approval, ({ ctx, params }) => approvals.get(ctx, params.id));
  route(m.approve, ({ ctx, params, body }) => approvals.decide(ctx, params.id, 'approve', body));
  route(m.deny, ({ ctx, params, body }) => approvals.decide(ctx, params.id, 'deny', body));
}
