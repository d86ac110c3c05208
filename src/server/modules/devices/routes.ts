import { REENROLLMENT_HEADER } from '../../../contract/agents.js';
import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerDeviceRoutes({ route, services, worker }: ModuleContext): void {
  const a = contract.agents;
  const d = contract.devices;
  const devices = services.devices;
  route(a.enroll, ({ ctx, body, request }) => {
    // An empty header is no header; a repeated one is taken as given (Node joins it, so it matches no token).
    const token = request.headers[REENROLLMENT_HEADER];
    return devices.enroll(ctx, body, typeof token === 'string' && token.trim() !== '' ? token.trim() : undefined);
  });
  route(a.heartbeat, ({ ctx, params, body }) => devices.heartbeat(ctx, params.id, body));
  route(d.list, ({ ctx, query }) => devices.list(ctx, query, query.filterId ? services.filters.conditionsOf(ctx, query.filterId) : undefined));
  route(d.get, ({ ctx, params }) => ({ ...devices.get(ctx, params.id), groups: services.groups.groupsOfDevice(params.id) }));
  route(d.update, ({ ctx, params, body }) => devices.update(ctx, params.id, body));
  route(d.metrics, ({ ctx, params, query }) => devices.metrics(ctx, params.id, query));
  route(d.decommission, ({ ctx, params }) => devices.decommission(ctx, params.id));

  worker.every('devices.mark-offline', 60_000, () => {
    devices.markOffline();
  });
}
