import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
import { alertMetricSamples, alerts } from '../../db/schema/index.js';

/** A subquery of the ids of devices with an open critical alert (the `alerts.critical` device filter field). */
export function devicesWithOpenCriticalAlert(): SQL {
  return sql`SELECT ${alerts.deviceId} FROM ${alerts} WHERE ${alerts.severity} = 'critical' AND ${alerts.status} IN ('active', 'acknowledged') AND ${alerts.deviceId} IS NOT NULL`;
}

/** The newest samples of a device, all metrics or one, prepared once per database (db/prepared.ts). */
const sampleQueries = preparedQueries((db) => {
  const columns = { metric: alertMetricSamples.metric, serviceName: alertMetricSamples.serviceName, value: alertMetricSamples.value, textValue: alertMetricSamples.textValue, at: alertMetricSamples.at };
  const ofDevice = eq(alertMetricSamples.deviceId, sql.placeholder('deviceId'));
  const newest = (where: SQL | undefined) =>
    db.select(columns).from(alertMetricSamples).where(where).orderBy(desc(alertMetricSamples.at)).limit(sql.placeholder('limit')).prepare();
  return { all: newest(ofDevice), ofMetric: newest(and(ofDevice, eq(alertMetricSamples.metric, sql.placeholder('metric')))) };
});

/** The newest metric samples an agent reported for a device (newest first), optionally of one metric. */
export function recentMetricSamples(db: Db, deviceId: string, limit: number, metric?: string) {
  const queries = sampleQueries(db);
  const rows = metric === undefined ? queries.all.all({ deviceId, limit }) : queries.ofMetric.all({ deviceId, limit, metric });
  return rows.map((s) => ({ metric: s.metric, serviceName: s.serviceName === '' ? null : s.serviceName, value: s.value, textValue: s.textValue, timestamp: new Date(s.at).toISOString() }));
}
