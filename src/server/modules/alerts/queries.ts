import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { alertMetricSamples, alerts } from '../../db/schema/index.js';

/** A subquery of the ids of devices with an open critical alert (the `alerts.critical` device filter field). */
export function devicesWithOpenCriticalAlert(): SQL {
  return sql`SELECT ${alerts.deviceId} FROM ${alerts} WHERE ${alerts.severity} = 'critical' AND ${alerts.status} IN ('active', 'acknowledged') AND ${alerts.deviceId} IS NOT NULL`;
}

/** The newest metric samples an agent reported for a device (newest first), optionally of one metric. */
export function recentMetricSamples(db: Db, deviceId: string, limit: number, metric?: string) {
  return db
    .select({ metric: alertMetricSamples.metric, serviceName: alertMetricSamples.serviceName, value: alertMetricSamples.value, textValue: alertMetricSamples.textValue, at: alertMetricSamples.at })
    .from(alertMetricSamples)
    .where(metric === undefined ? eq(alertMetricSamples.deviceId, deviceId) : and(eq(alertMetricSamples.deviceId, deviceId), eq(alertMetricSamples.metric, metric)))
    .orderBy(desc(alertMetricSamples.at))
    .limit(limit)
    .all()
    .map((s) => ({ metric: s.metric, serviceName: s.serviceName === '' ? null : s.serviceName, value: s.value, textValue: s.textValue, timestamp: new Date(s.at).toISOString() }));
}

/** Alerts whose title or message contains `q` (case-insensitive), newest first, within organizations and sites
 * (null: no restriction); for GET /search. */
export function searchAlerts(db: Db, reach: { orgIds: string[] | null; siteIds: string[] | null }, q: string, limit: number) {
  const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return db
    .select({ id: alerts.id, title: alerts.title, message: alerts.message, severity: alerts.severity })
    .from(alerts)
    .where(
      and(
        reach.orgIds === null ? undefined : sql`${alerts.orgId} IN (SELECT value FROM json_each(${JSON.stringify(reach.orgIds)}))`,
        reach.siteIds === null ? undefined : sql`${alerts.siteId} IN (SELECT value FROM json_each(${JSON.stringify(reach.siteIds)}))`,
        sql`(${alerts.title} LIKE ${pattern} ESCAPE '\\' OR ${alerts.message} LIKE ${pattern} ESCAPE '\\')`,
      ),
    )
    .orderBy(desc(alerts.triggeredAt))
    .limit(limit)
    .all();
}
