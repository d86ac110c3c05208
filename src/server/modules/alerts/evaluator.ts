import type { Statement } from 'better-sqlite3';
import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { ConditionOperatorSchema, type ConditionOperator } from '../../../contract/alerts.js';
import type { Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
import { alertEvaluatorState } from '../../db/schema/index.js';
import type { DevicesService } from '../devices/service.js';
import type { AlertsService, AlertRow, RuleState } from './alerts-service.js';
import type { CorrelationService } from './correlation.js';
import type { AlertRulesService } from './rules-service.js';

/** How far apart an agent's samples may be (3 × its 30 s collection interval): a window counts as covered when
 * its first sample is this close to the window's start and its last this close to its end. */
export const SAMPLE_GRACE_MS = 90_000;
/** Evaluation instants are multiples of this. */
export const STEP_MS = 30_000;
/** Samples may arrive this late; an instant is evaluated only once they had the time to. */
export const LAG_MS = 15_000;
/** Samples are kept as long as the longest window (durationMinutes ≤ 1440) needs them. */
export const RETENTION_MS = 1440 * 60_000 + SAMPLE_GRACE_MS + 60 * 60_000;

/** A rule's evaluable condition (02 §2.1 conventional keys). */
export const EvaluableConditionSchema = z.object({
  metric: z.string().min(1),
  operator: ConditionOperatorSchema,
  threshold: z.union([z.number(), z.string()]),
  durationMinutes: z.number().min(0).max(1440).default(0),
  serviceName: z.string().optional(),
});
export type EvaluableCondition = z.infer<typeof EvaluableConditionSchema>;

/** What SQL aggregates of one (device, metric) window. */
export interface WindowAggregate {
  samples: number;
  /** Samples that do not satisfy the condition. */
  failing: number;
  firstAt: number;
  lastAt: number;
}

/**
 * The decision (pure): the condition held for the whole window `[start, end]` when there are samples, every one
 * satisfies it, and they cover the window (the first within the grace of its start, the last within the grace of
 * its end). Missing data never fires: an offline device that stopped reporting raises nothing.
 */
export function conditionHeld(window: { start: number; end: number }, agg: WindowAggregate | undefined): boolean {
  if (!agg || agg.samples === 0 || agg.failing > 0) return false;
  return agg.firstAt <= window.start + SAMPLE_GRACE_MS && agg.lastAt >= window.end - SAMPLE_GRACE_MS;
}

/** The window a condition is evaluated over at `end`: its duration, at least one grace period. A condition
 * without a duration is decided by the newest sample of that grace period alone (the evaluator's query). */
export function windowFor(condition: EvaluableCondition, end: number): { start: number; end: number } {
  return { start: end - Math.max(condition.durationMinutes * 60_000, SAMPLE_GRACE_MS), end };
}

/**
 * Auto-resolve (pure): the condition no longer holds when the opposite held over the same window — there are
 * samples, none satisfies the condition, and they cover it. Missing data never resolves, as it never fires.
 * (The evaluator also requires the window to start after the alert was raised.)
 */
export function conditionCleared(window: { start: number; end: number }, agg: WindowAggregate | undefined): boolean {
  if (!agg || agg.samples === 0 || agg.failing < agg.samples) return false;
  return agg.firstAt <= window.start + SAMPLE_GRACE_MS && agg.lastAt >= window.end - SAMPLE_GRACE_MS;
}

/** Which devices of the rule's organization its targets select (02 §2.1 Targets; tags: any matches). */
export function targeted(targets: Record<string, unknown>, device: { id: string; siteId: string | null; tags: string[] }): boolean {
  const list = (key: string) => (Array.isArray(targets[key]) ? (targets[key] as unknown[]) : []);
  switch (targets.scope) {
    case 'site':
      return device.siteId !== null && list('siteIds').includes(device.siteId);
    case 'device':
      return list('deviceIds').includes(device.id);
    case 'tag':
      return device.tags.some((tag) => list('tags').includes(tag));
    default:
      return true;
  }
}

/** Devices that are not reporting are not evaluated (see api-notes "offline devices"). */
const EVALUATED_STATUSES = new Set(['online', 'maintenance', 'updating']);

/** The SQL of a failing sample, per operator and threshold kind: fixed text, the threshold is a parameter. */
function failingSql(operator: ConditionOperator, numeric: boolean): string {
  if (operator === 'equals') {
    return numeric ? '(value IS NULL OR value <> @threshold)' : "(lower(coalesce(text_value, CAST(value AS TEXT), '')) <> lower(@threshold))";
  }
  return `(value IS NULL OR NOT (value ${operator} @threshold))`;
}

interface AggRow {
  deviceId: string;
  samples: number;
  failing: number;
  firstAt: number;
  lastAt: number;
  minValue: number | null;
  maxValue: number | null;
  avgValue: number | null;
  lastText: string | null;
}

/** A device as the evaluator sees it (DevicesService.forEvaluation). */
type EvaluatedDevice = ReturnType<DevicesService['forEvaluation']>[number];
const NO_ALERTS: RuleState = { blocked: new Set(), open: new Map() };
const WATERMARK_KEY = 'rules';
/** The event-driven path's watermark: the id of the newest sample it has evaluated. */
const SAMPLES_KEY = 'samples';
/** The job metrics ingest enqueues (one pending at a time: ingest coalesces into it). */
export const EVALUATE_RECENT_JOB = 'alerts.evaluate-recent';

/** The evaluator's watermarks (`alert_evaluator_state` by `key`): read, and written (`evaluatedThrough`), prepared
 * once per database (db/prepared.ts). */
const watermarkQueries = preparedQueries((db) => ({
  read: db
    .select()
    .from(alertEvaluatorState)
    .where(eq(alertEvaluatorState.key, sql.placeholder('key')))
    .prepare(),
  write: db
    .insert(alertEvaluatorState)
    .values({ key: sql`${sql.placeholder('key')}`, evaluatedThrough: sql`${sql.placeholder('evaluatedThrough')}` })
    .onConflictDoUpdate({ target: alertEvaluatorState.key, set: { evaluatedThrough: sql`${sql.placeholder('evaluatedThrough')}` } })
    .prepare(),
}));

/** Which devices (of which organizations) an evaluation covers; undefined = all. */
interface Only {
  orgIds: Set<string>;
  deviceIds: Set<string>;
}

/**
 * The periodic evaluation (brief step 4): at each instant (a multiple of 30 s, evaluated once — the watermark in
 * `alert_evaluator_state` is written in the same transaction as the alerts it produced, so a restart neither
 * skips nor repeats it), every enabled rule with an evaluable condition is checked against the devices its
 * targets select, by one GROUP BY query per rule over the sample window.
 */
export class AlertEvaluator {
  private readonly statements = new Map<string, Statement>();
  private readonly prune: Statement<[number]>;

  private readonly newSamples: Statement<[number], { deviceId: string; orgId: string; lastId: number }>;
  private readonly topSample: Statement<[], { id: number | null }>;

  constructor(
    private readonly db: Db,
    private readonly rules: AlertRulesService,
    private readonly alerts: AlertsService,
    private readonly devices: DevicesService,
    private readonly correlation: CorrelationService,
  ) {
    this.prune = db.$client.prepare('DELETE FROM alert_metric_samples WHERE id IN (SELECT id FROM alert_metric_samples WHERE at < ? LIMIT 20000)');
    this.newSamples = db.$client.prepare('SELECT device_id AS deviceId, org_id AS orgId, MAX(id) AS lastId FROM alert_metric_samples WHERE id > ? GROUP BY device_id');
    this.topSample = db.$client.prepare('SELECT MAX(id) AS id FROM alert_metric_samples');
  }

  /** Per device, the samples of the window; with `newestOnly` (conditions without a duration), only the newest. */
  private aggregate(operator: ConditionOperator, numeric: boolean, newestOnly: boolean): Statement {
    const key = `${operator}:${numeric}:${newestOnly}`;
    let statement = this.statements.get(key);
    if (!statement) {
      const window = `SELECT * FROM alert_metric_samples
          WHERE metric = @metric AND service_name = @serviceName
            AND device_id IN (SELECT value FROM json_each(@deviceIds))
            AND at >= @start AND at <= @end`;
      const source = newestOnly
        ? `(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY device_id ORDER BY at DESC, id DESC) AS rn FROM (${window})) WHERE rn = 1)`
        : `(${window})`;
      statement = this.db.$client.prepare(
        `SELECT device_id AS deviceId, COUNT(*) AS samples, SUM(CASE WHEN ${failingSql(operator, numeric)} THEN 1 ELSE 0 END) AS failing,
                MIN(at) AS firstAt, MAX(at) AS lastAt, MIN(value) AS minValue, MAX(value) AS maxValue, AVG(value) AS avgValue,
                MAX(text_value) AS lastText
           FROM ${source}
          GROUP BY device_id`,
      );
      this.statements.set(key, statement);
    }
    return statement;
  }

  /** The last instant evaluated, if any. */
  watermark(key = WATERMARK_KEY): number | undefined {
    return watermarkQueries(this.db).read.get({ key })?.evaluatedThrough;
  }

  private setWatermark(key: string, value: number): void {
    watermarkQueries(this.db).write.run({ key, evaluatedThrough: value });
  }

  /**
   * The event-driven evaluation (what metrics ingest wakes): the devices that reported samples since the last
   * run are evaluated at `now`, the window ending now. The newest sample id seen is stored in the transaction
   * that creates the alerts, so each batch of samples is evaluated by this path once, whatever restarts.
   */
  runRecent(now: Date): AlertRow[] {
    const raised = this.db.$client
      .transaction(() => {
        let from = this.watermark(SAMPLES_KEY) ?? 0;
        // Sample ids are reused only when every sample was pruned: start over then.
        if ((this.topSample.get()?.id ?? 0) < from) from = 0;
        const fresh = this.newSamples.all(from);
        if (fresh.length === 0) return [];
        const only: Only = { orgIds: new Set(fresh.map((r) => r.orgId)), deviceIds: new Set(fresh.map((r) => r.deviceId)) };
        const out = this.evaluateAt(now.getTime(), only);
        this.setWatermark(SAMPLES_KEY, Math.max(...fresh.map((r) => r.lastId)));
        return out;
      })
      .immediate();
    if (raised.length > 0) this.correlation.linkNew(raised);
    return raised;
  }

  /** One run: ends expired suppressions, prunes old samples, evaluates the newest instant not yet evaluated.
   * Returns the alerts it raised (none when that instant was evaluated already). */
  run(now: Date): AlertRow[] {
    this.alerts.endExpiredSuppressions(now);
    for (let i = 0; i < 50 && this.prune.run(now.getTime() - RETENTION_MS).changes > 0; i++);
    const end = Math.floor((now.getTime() - LAG_MS) / STEP_MS) * STEP_MS;
    const raised = this.db.$client
      .transaction(() => {
        const done = this.watermark();
        if (done !== undefined && done >= end) return [];
        const out = this.evaluateAt(end);
        this.setWatermark(WATERMARK_KEY, end);
        return out;
      })
      .immediate();
    if (raised.length > 0) this.correlation.linkNew(raised);
    return raised;
  }

  /** Every enabled rule at one instant (inside the caller's transaction), on every device or those of `only`:
   * raises the alerts whose condition held over the window, resolves those whose condition no longer does. */
  private evaluateAt(end: number, only?: Only): AlertRow[] {
    // Only the columns the decision needs, of the devices that reported (the event-driven path) or of every
    // device; and the rules' open alerts and cooldowns in one query: an evaluation materialises nothing else.
    const onlyDevices = only ? [...only.deviceIds] : undefined;
    const devicesByOrg = new Map<string, EvaluatedDevice[]>();
    const raised: AlertRow[] = [];
    const at = new Date(end).toISOString();
    const rules = this.rules.enabledRules().filter((rule) => !only || only.orgIds.has(rule.orgId));
    const states = this.alerts.rulesState(
      rules.map((rule) => rule.id),
      at,
      onlyDevices,
    );
    for (const rule of rules) {
      const parsed = EvaluableConditionSchema.safeParse(rule.conditions);
      if (!parsed.success) continue;
      const condition = parsed.data;
      let orgDevices = devicesByOrg.get(rule.orgId);
      if (!orgDevices) {
        orgDevices = this.devices.forEvaluation(rule.orgId, onlyDevices).filter((d) => EVALUATED_STATUSES.has(d.status));
        devicesByOrg.set(rule.orgId, orgDevices);
      }
      const { blocked, open } = states.get(rule.id) ?? NO_ALERTS;
      const inScope = orgDevices.filter((d) => targeted(rule.targets, d));
      const candidates = inScope.filter((d) => !blocked.has(d.id));
      const clearing = rule.autoResolve ? inScope.filter((d) => open.has(d.id)) : [];
      if (candidates.length === 0 && clearing.length === 0) continue;
      const window = windowFor(condition, end);
      const numeric = typeof condition.threshold === 'number';
      const rows = this.aggregate(condition.operator, numeric, condition.durationMinutes === 0).all({
        metric: condition.metric,
        serviceName: condition.serviceName ?? '',
        deviceIds: JSON.stringify([...candidates, ...clearing].map((d) => d.id)),
        start: window.start,
        end: window.end,
        threshold: condition.threshold,
      }) as AggRow[];
      const byDevice = new Map(rows.map((r) => [r.deviceId, r]));
      for (const device of clearing) {
        const alert = open.get(device.id);
        // Only a window wholly after the alert was raised: the samples before the crossing say nothing about it.
        if (alert && window.start >= Date.parse(alert.triggeredAt) && conditionCleared(window, byDevice.get(device.id))) {
          this.alerts.autoResolve(alert, `Auto-resolved: ${describeCondition(condition)} no longer holds on ${device.hostname}.`);
        }
      }
      for (const device of candidates) {
        const agg = byDevice.get(device.id);
        if (!agg || !conditionHeld(window, agg)) continue;
        const alert = this.alerts.trigger({
          rule,
          device,
          title: `${device.hostname}: ${rule.name}`,
          message: `Alert triggered: ${rule.name} on ${device.hostname} (${describeCondition(condition)}).`,
          context: {
            metric: condition.metric,
            operator: condition.operator,
            threshold: condition.threshold,
            durationMinutes: condition.durationMinutes,
            ...(condition.serviceName ? { serviceName: condition.serviceName } : {}),
            observed: agg.minValue !== null ? { min: agg.minValue, max: agg.maxValue, avg: agg.avgValue, samples: agg.samples } : { value: agg.lastText, samples: agg.samples },
            windowStart: new Date(window.start).toISOString(),
            windowEnd: at,
          },
          triggeredAt: at,
        });
        if (alert) raised.push(alert);
      }
    }
    return raised;
  }

  /** A dry run (`POST /alerts/rules/:id/test`): whether the rule's condition holds on one device now, and why. */
  check(conditions: Record<string, unknown>, deviceId: string, now: number): { result: boolean; reason: string } {
    const parsed = EvaluableConditionSchema.safeParse(conditions);
    if (!parsed.success) return { result: false, reason: 'Not an evaluable condition (metric, operator and threshold are needed)' };
    const condition = parsed.data;
    const window = windowFor(condition, now);
    const [agg] = this.aggregate(condition.operator, typeof condition.threshold === 'number', condition.durationMinutes === 0).all({
      metric: condition.metric,
      serviceName: condition.serviceName ?? '',
      deviceIds: JSON.stringify([deviceId]),
      start: window.start,
      end: window.end,
      threshold: condition.threshold,
    }) as AggRow[];
    const what = describeCondition(condition);
    if (!agg) return { result: false, reason: `${what}: no samples in the window` };
    if (agg.failing > 0) return { result: false, reason: `${what}: ${agg.failing} of ${agg.samples} samples do not satisfy it` };
    if (!conditionHeld(window, agg)) return { result: false, reason: `${what}: the samples do not cover the window yet` };
    return { result: true, reason: `${what}: held (${agg.samples} samples)` };
  }

}

/** `cpu.usage > 90 for 5 min` */
export function describeCondition(c: EvaluableCondition): string {
  const service = c.serviceName ? ` (${c.serviceName})` : '';
  return `${c.metric}${service} ${c.operator} ${String(c.threshold)} for ${c.durationMinutes} min`;
}
