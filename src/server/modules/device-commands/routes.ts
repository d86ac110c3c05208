import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerDeviceCommandRoutes({ route, services }: ModuleContext): void {
  const d = contract.deviceCommands;
  const a = contract.agentCommands;
  const commands = services.deviceCommands;
  route(d.create, ({ ctx, params, body }) => commands.create(ctx, params.id, body));
  route(d.list, ({ ctx, params, query }) => commands.list(ctx, params.id, query));
  route(a.fetch, ({ params, query }) => commands.fetchForAgent(params.id, query));
  route(a.result, ({ params, body }) => commands.reportResult(params.id, params.commandId, body));
}
