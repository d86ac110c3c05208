import { and, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Caller } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { alerts } from '../../db/schema/index.js';
import type { AlertSeverity, AlertStatus } from '../../db/schema/alerts.js';
import { inCallerDeviceGroups } from '../devices/service.js';
import { readOrgIds } from './scope.js';

/** What the mobile inbox (02 §4.6) asks of the alerts: a filter, a page or a keyset position. */
export interface InboxFilter {
  orgId?: string | undefined;
  statuses: AlertStatus[];
  severity?: AlertSeverity | undefined;
}

/**
 * Alert reads for the mobile interface (02 §4.6, 05 wire notes "4.6"): the inbox with keyset paging on
 * (triggeredAt, id), and the count of open critical alerts for the summary. Same visibility as AlertsService:
 * the organizations the caller reaches (an orgId out of reach is 403) and, for users restricted to sites or device
 * groups, the alerts of those (01 §2.6).
 */
export class MobileAlertReads {
  constructor(private readonly db: Db) {}

  private visible(caller: Caller, orgId: string | undefined): SQL | undefined | false {
    const orgIds = readOrgIds(this.db, caller, orgId);
    if (orgIds !== null && orgIds.length === 0) return false;
    if (caller.siteIds !== null && caller.siteIds.length === 0) return false;
    if (caller.deviceGroupIds !== null && caller.deviceGroupIds.length === 0) return false;
    return and(
      orgIds === null ? undefined : inArray(alerts.orgId, orgIds),
      caller.siteIds === null ? undefined : inArray(alerts.siteId, caller.siteIds),
      inCallerDeviceGroups(caller, alerts.deviceId),
    );
  }

  inbox(caller: Caller, filter: InboxFilter, window: { limit: number; offset?: number; after?: { ts: string; id: string } }) {
    const scope = this.visible(caller, filter.orgId);
    if (scope === false) return { rows: [], total: 0 };
    const where = and(
      scope,
      filter.statuses.length > 0 ? inArray(alerts.status, filter.statuses) : undefined,
      filter.severity ? eq(alerts.severity, filter.severity) : undefined,
    );
    const { after } = window;
    const keyset = after && sql`(${alerts.triggeredAt} < ${after.ts} OR (${alerts.triggeredAt} = ${after.ts} AND ${alerts.id} < ${after.id}))`;
    const rows = this.db
      .select()
      .from(alerts)
      .where(keyset ? and(where, keyset) : where)
      .orderBy(desc(alerts.triggeredAt), desc(alerts.id))
      .limit(window.limit)
      .offset(window.offset ?? 0)
      .all();
    const total = this.db.select({ n: count() }).from(alerts).where(where).get()?.n ?? 0;
    return { rows, total };
  }

  /** Alerts per status and the open (active or acknowledged) critical ones. */
  counts(caller: Caller, orgId: string | undefined) {
    const out = { total: 0, active: 0, acknowledged: 0, resolved: 0, critical: 0 };
    const scope = this.visible(caller, orgId);
    if (scope === false) return out;
    const rows = this.db.select({ status: alerts.status, severity: alerts.severity, n: count() }).from(alerts).where(scope).groupBy(alerts.status, alerts.severity).all();
    for (const { status, severity, n } of rows) {
      out.total += n;
      if (status === 'active' || status === 'acknowledged' || status === 'resolved') out[status] += n;
      if (severity === 'critical' && (status === 'active' || status === 'acknowledged')) out.critical += n;
    }
    return out;
  }
}
