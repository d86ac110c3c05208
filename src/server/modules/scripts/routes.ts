import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerScriptRoutes({ route, services, worker }: ModuleContext): void {
  const s = contract.scripts;
  const scripts = services.scripts;
  route(s.list, ({ ctx, query }) => scripts.list(ctx, query));
  route(s.systemLibrary, () => scripts.systemLibrary());
  route(s.import, ({ ctx, params, body }) => scripts.importSystem(ctx, params.id, body.orgId));
  route(s.create, ({ ctx, body }) => scripts.create(ctx, body));
  route(s.get, ({ ctx, params }) => scripts.get(ctx, params.id));
  route(s.update, ({ ctx, params, body }) => scripts.update(ctx, params.id, body));
  route(s.delete, ({ ctx, params }) => scripts.delete(ctx, params.id));
  route(s.execute, ({ ctx, params, body }) => scripts.execute(ctx, params.id, body));
  route(s.executions, ({ ctx, params, query }) => scripts.executions(ctx, params.id, query));
  route(s.execution, ({ ctx, params }) => scripts.execution(ctx, params.id));
  route(s.cancel, ({ ctx, params }) => scripts.cancel(ctx, params.id));
  route(s.listCustomFields, ({ ctx, query }) => scripts.listCustomFields(ctx, query.orgId));
  route(s.createCustomField, ({ ctx, body }) => scripts.createCustomField(ctx, body));
  route(s.deleteCustomField, ({ ctx, params }) => scripts.deleteCustomField(ctx, params.id));
  scripts.register(worker);
}
