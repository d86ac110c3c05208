import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerDeviceCommandRoutes({ route, services }: ModuleContext): void {
  const d = contract.deviceCommands;
  const a = contract.agentCommands;
  const commands = services.deviceCommands;
  route(d.create, ({ ctx, params, body }) => commands.create(ctx, params.id, body));
  route(d.list, ({ ctx, params, query }) => commands.list(ctx, params.id, query));
  route(a.fetch, ({ ctx, params, query }) => commands.fetchForAgent(ctx, params.id, query));
  route(a.result, ({ ctx, params, body }) => commands.reportResult(ctx, params.id, params.commandId, body));
}
