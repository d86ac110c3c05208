import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';
import { PERIODIC_MS, REEVALUATE_JOB } from './service.js';

export function registerGroupRoutes({ route, services, worker }: ModuleContext): void {
  const groups = services.groups;
  for (const g of [contract.groups, contract.deviceGroups]) {
    bindCalls(route, g, groups, ['list', 'create', 'get', 'update', 'delete', 'members']);
    route(g.addMembers, ({ ctx, params, body }) => groups.addMembers(ctx, params.id, body.deviceIds));
    route(g.removeMember, ({ ctx, params }) => groups.removeMember(ctx, params.id, params.deviceId));
    route(g.preview, ({ ctx, params, body }) => groups.preview(ctx, params.id, body?.limit));
    route(g.pin, ({ ctx, params }) => groups.pin(ctx, params.id, params.deviceId));
    route(g.unpin, ({ ctx, params }) => groups.unpin(ctx, params.id, params.deviceId));
    route(g.membershipLog, ({ ctx, params, query }) => groups.membershipLog(ctx, params.id, query));
  }
  const t = contract.tags;
  route(t.list, ({ ctx, query }) => services.devices.listTags(ctx, query.search));
  route(t.devices, ({ ctx, query }) => services.devices.devicesWithTag(ctx, query.tag));

  // Dynamic membership follows the devices: a coalesced job per organization after a change (app.ts wires
  // the devices module to it), and a periodic pass for conditions on time.
  worker.handle(REEVALUATE_JOB, (payload) => {
    if (typeof payload.orgId === 'string') groups.reevaluateOrg(payload.orgId);
  });
  worker.every('groups.reevaluate-all', PERIODIC_MS, () => {
    groups.reevaluateOrg(null);
  });
}
