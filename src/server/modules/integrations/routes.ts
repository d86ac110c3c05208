import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';

export function registerIntegrationRoutes({ route, services }: ModuleContext): void {
  const i = contract.integrations;
  const s = services.integrations;
  route(i.communication, ({ ctx, query }) => s.communication(ctx, query.orgId));
  route(i.slack, ({ ctx, query, body }) => s.saveChat(ctx, 'slack', query.orgId, body));
  route(i.teams, ({ ctx, query, body }) => s.saveChat(ctx, 'teams', query.orgId, body));
  route(i.discord, ({ ctx, query, body }) => s.saveChat(ctx, 'discord', query.orgId, body));
  route(i.getMonitoring, ({ ctx, query }) => s.getMonitoring(ctx, query.orgId));
  route(i.putMonitoring, ({ ctx, query, body }) => s.putMonitoring(ctx, query.orgId, body));
  route(i.testMonitoring, ({ ctx, query, body }) => s.testMonitoring(ctx, query.orgId, body));
  route(i.getTicketing, ({ ctx, query }) => s.getTicketing(ctx, query.orgId));
  route(i.saveTicketing, ({ ctx, query, body }) => s.saveTicketing(ctx, query.orgId, body));
  route(i.testTicketing, ({ ctx, query, body }) => s.testTicketing(ctx, query.orgId, body));
  route(i.getPsa, ({ ctx, query }) => s.getPsa(ctx, query.orgId));
  route(i.savePsa, ({ ctx, query, body }) => s.savePsa(ctx, query.orgId, body));
  route(i.updatePsa, ({ ctx, query, body }) => s.updatePsa(ctx, query.orgId, body));
  route(i.testPsa, ({ ctx, query, body }) => s.testPsa(ctx, query.orgId, body));
}
