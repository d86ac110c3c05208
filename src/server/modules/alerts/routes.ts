import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { bindCalls } from '../shared/bind-calls.js';
import { EVALUATE_RECENT_JOB } from './evaluator.js';

/** How often the evaluator runs (a durable periodic job); each run evaluates the newest unevaluated instant. */
export const EVALUATE_EVERY_MS = 30_000;

export function registerAlertRoutes({ route, services, worker }: ModuleContext): void {
  const t = contract.alertTemplates;
  const a = contract.alerts;
  const { alertRules: rules, alerts, alertCorrelations: correlations, alertMetrics: metrics, alertEvaluator: evaluator } = services;

  route(t.listTemplates, ({ ctx, query }) => rules.listTemplates(ctx, query));
  route(t.listBuiltInTemplates, ({ ctx, query }) => rules.listTemplates(ctx, query, true));
  bindCalls(route, t, rules, ['createTemplate', 'getTemplate', 'updateTemplate', 'deleteTemplate']);
  bindCalls(route, t, rules, ['listRules', 'createRule', 'getRule', 'updateRule', 'deleteRule']);
  route(t.toggleRule, ({ ctx, params, body }) => rules.toggleRule(ctx, params.id, body.enabled));
  route(t.listCorrelations, ({ ctx, query }) => correlations.list(ctx, query));
  route(t.correlationGroups, ({ ctx, query }) => correlations.groups(ctx, query.orgId));
  route(t.analyzeCorrelations, ({ ctx, body }) => correlations.analyze(ctx, body));
  route(t.getCorrelation, ({ ctx, params }) => correlations.forAlert(ctx, params.alertId));

  route(a.list, ({ ctx, query }) => alerts.list(ctx, query));
  route(a.summary, ({ ctx, query }) => alerts.summary(ctx, query.orgId));
  route(a.get, ({ ctx, params }) => alerts.get(ctx, params.id));
  route(a.acknowledge, ({ ctx, params }) => alerts.acknowledge(ctx, params.id));
  route(a.resolve, ({ ctx, params, body }) => alerts.resolve(ctx, params.id, body.note));
  route(a.suppress, ({ ctx, params, body }) => alerts.suppress(ctx, params.id, body.until));
  route(a.bulk, ({ ctx, body }) => alerts.bulk(ctx, body));
  route(a.reportMetrics, ({ ctx, params, body }) => metrics.report(ctx, params.id, body));

  const l = contract.alertRulesLegacy;
  const legacy = services.alertRulesLegacy;
  bindCalls(route, l, legacy, ['list', 'get', 'create', 'update', 'delete']);
  route(l.test, ({ ctx, params, body }) => legacy.test(ctx, params.id, body.deviceId));

  // The sweep: every 30 s instant (duration windows, late samples, rules changed since the samples came).
  worker.every('alerts.evaluate', EVALUATE_EVERY_MS, () => {
    evaluator.run(new Date());
  });
  // The event-driven path: metrics ingest enqueues this job (coalesced: one pending at a time) with its samples.
  worker.handle(EVALUATE_RECENT_JOB, () => {
    evaluator.runRecent(new Date());
  });
}
