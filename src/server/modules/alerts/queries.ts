import { sql, type SQL } from 'drizzle-orm';
import { alerts } from '../../db/schema/index.js';

/** A subquery of the ids of devices with an open critical alert (the `alerts.critical` device filter field). */
export function devicesWithOpenCriticalAlert(): SQL {
  return sql`SELECT ${alerts.deviceId} FROM ${alerts} WHERE ${alerts.severity} = 'critical' AND ${alerts.status} IN ('active', 'acknowledged') AND ${alerts.deviceId} IS NOT NULL`;
}
