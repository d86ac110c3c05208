import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerDeviceRoutes({ route, services, worker }: ModuleContext): void {
  const a = contract.agents;
  const d = contract.devices;
  const devices = services.devices;
  route(a.enroll, ({ ctx, body }) => devices.enroll(ctx, body));
  route(a.heartbeat, ({ ctx, params, body }) => devices.heartbeat(ctx, params.id, body));
  route(d.list, ({ ctx, query }) => devices.list(ctx, query));
  route(d.get, ({ ctx, params }) => devices.get(ctx, params.id));
  route(d.decommission, ({ ctx, params }) => devices.decommission(ctx, params.id));

  worker.every('devices.mark-offline', 60_000, () => {
    devices.markOffline();
  });
}
