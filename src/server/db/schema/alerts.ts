import { sql } from 'drizzle-orm';
import { index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, timestamps } from './columns.js';
import { organizations } from './tenancy.js';

/** Alerting (02 §2.1-2.3, §3): templates, rules, alerts, the metric samples rules read, correlation links. */

export type AlertSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';
export type AlertStatus = 'active' | 'acknowledged' | 'resolved' | 'suppressed';
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;

/** Alert templates (02 §2.1); built-ins have no organization and fixed ids. */
export const alertTemplates = sqliteTable(
  'alert_templates',
  {
    id: id(),
    /** Null for the built-in templates every organization sees. */
    orgId: text().references(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    description: text(),
    category: text().notNull().default('Custom'),
    severity: text({ enum: SEVERITIES }).notNull(),
    conditions: json<Record<string, unknown>>().notNull().default({}),
    targets: json<Record<string, unknown>>().notNull().default({ scope: 'organization' }),
    defaultCooldownMinutes: integer().notNull().default(15),
    titleTemplate: text().notNull(),
    messageTemplate: text().notNull(),
    builtIn: integer({ mode: 'boolean' }).notNull().default(false),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [index('alert_templates_org_idx').on(t.orgId, t.name)],
);

/** Alert rules, instances of a template in one organization (02 §2.2). */
export const alertRules = sqliteTable(
  'alert_rules',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    /** A template in use cannot be deleted (409). */
    templateId: ref(() => alertTemplates.id),
    templateName: text().notNull(),
    name: text().notNull(),
    description: text(),
    severity: text({ enum: SEVERITIES }).notNull(),
    enabled: integer({ mode: 'boolean' }).notNull().default(true),
    targets: json<Record<string, unknown>>().notNull(),
    conditions: json<Record<string, unknown>>().notNull(),
    cooldownMinutes: integer().notNull(),
    /** The evaluator resolves the rule's alerts when their condition no longer holds (api-notes "Auto-resolve"). */
    autoResolve: integer({ mode: 'boolean' }).notNull().default(true),
    /** Override channels (ids of `notify`'s channels); null = every enabled channel of the organization. */
    notificationChannelIds: json<string[]>(),
    /** `notify`'s escalation policy (no foreign key: that table is not ours). */
    escalationPolicyId: text(),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [index('alert_rules_org_idx').on(t.orgId, t.createdAt), index('alert_rules_template_idx').on(t.templateId)],
);

/** Alerts (02 §3, 05 wire notes "4.1 Core alerts"). */
export const alerts = sqliteTable(
  'alerts',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    /** The device's site when the alert fired (site-restricted users see only their sites' alerts). */
    siteId: text(),
    /** Plain ids: a deleted rule or device leaves its alerts as history. */
    ruleId: text(),
    ruleName: text(),
    templateId: text(),
    deviceId: text(),
    deviceName: text(),
    status: text({ enum: ['active', 'acknowledged', 'resolved', 'suppressed'] }).notNull().default('active'),
    severity: text({ enum: SEVERITIES }).notNull(),
    title: text().notNull(),
    message: text().notNull(),
    context: json<Record<string, unknown>>().notNull().default({}),
    triggeredAt: text().notNull(),
    acknowledgedAt: text(),
    acknowledgedBy: text(),
    resolvedAt: text(),
    resolvedBy: text(),
    resolutionNote: text(),
    suppressedUntil: text(),
    /** No new alert for the same rule and device before this (set on resolve). */
    cooldownUntil: text(),
    ...timestamps(),
  },
  (t) => [
    index('alerts_org_triggered_idx').on(t.orgId, t.triggeredAt),
    index('alerts_rule_device_idx').on(t.ruleId, t.deviceId),
    // 02 §3 + brief: one open alert per rule and device.
    uniqueIndex('alerts_open_rule_device_unique')
      .on(t.ruleId, t.deviceId)
      .where(sql`status IN ('active', 'acknowledged', 'suppressed')`),
  ],
);

/** Metric samples reported by agents; pruned after the longest evaluation window. `at` is Unix milliseconds. */
export const alertMetricSamples = sqliteTable(
  'alert_metric_samples',
  {
    id: integer().primaryKey(),
    deviceId: text().notNull(),
    orgId: text().notNull(),
    metric: text().notNull(),
    /** '' for metrics that are not per service. */
    serviceName: text().notNull().default(''),
    value: real(),
    textValue: text(),
    at: integer().notNull(),
  },
  (t) => [index('alert_metric_samples_window_idx').on(t.metric, t.serviceName, t.deviceId, t.at), index('alert_metric_samples_at_idx').on(t.at)],
);

/** Correlation links between two alerts of one organization (02 §2.3); alertId is the earlier alert. */
export const alertCorrelations = sqliteTable(
  'alert_correlations',
  {
    id: id(),
    orgId: text().notNull(),
    alertId: ref(() => alerts.id, { onDelete: 'cascade' }),
    relatedAlertId: ref(() => alerts.id, { onDelete: 'cascade' }),
    reason: text().notNull(),
    confidence: real().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('alert_correlations_pair_unique').on(t.alertId, t.relatedAlertId),
    index('alert_correlations_related_idx').on(t.relatedAlertId),
    index('alert_correlations_org_idx').on(t.orgId, t.createdAt),
  ],
);

/** The evaluator's watermark: the last instant evaluated, so no window is evaluated twice (also across restarts). */
export const alertEvaluatorState = sqliteTable('alert_evaluator_state', {
  key: text().primaryKey(),
  evaluatedThrough: integer().notNull(),
});
