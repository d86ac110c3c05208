import type { z } from 'zod';
import type { MobileDeviceListQuerySchema, MobileInboxQuerySchema } from '../../../contract/mobile.js';
import { systemContext, type RequestContext } from '../../context.js';
import type { AlertStatus } from '../../db/schema/alerts.js';
import { DomainError } from '../../errors.js';
import type { AlertsService } from '../alerts/alerts-service.js';
import type { MobileAlertReads } from '../alerts/mobile-inbox.js';
import { encodeCursor } from '../devices/out.js';
import type { DevicesService, ListedDevice } from '../devices/service.js';
import { decodePosition, encodePosition } from './cursor.js';

const SYSTEM = systemContext();
/** 05 wire notes "4.6": without a status filter the dismissed (suppressed) alerts are left out. */
const DEFAULT_STATUSES: AlertStatus[] = ['active', 'acknowledged', 'resolved'];
type CountedState = 'online' | 'offline' | 'maintenance';

/** The read side of the app (02 §4.6): the alert inbox, acknowledge and resolve (the alerts service's state
 * machine), managed devices, their metrics, and the summary counts. */
export class MobileInbox {
  constructor(
    private readonly alerts: AlertsService,
    private readonly reads: MobileAlertReads,
    private readonly devices: DevicesService,
  ) {}

  inbox(ctx: RequestContext, query: z.infer<typeof MobileInboxQuerySchema>) {
    const statuses = query.status === undefined ? DEFAULT_STATUSES : Array.isArray(query.status) ? query.status : [query.status];
    const after = query.cursor !== undefined ? decodePosition(query.cursor) : undefined;
    const { rows, total } = this.reads.inbox(
      ctx.caller,
      { orgId: query.orgId, statuses, severity: query.severity },
      after ? { limit: query.limit + 1, after } : { limit: query.limit + 1, offset: (query.page - 1) * query.limit },
    );
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const refs = this.deviceRefs(page.map((r) => r.deviceId));
    return {
      data: page.map((r) => ({
        id: r.id,
        orgId: r.orgId,
        status: r.status,
        severity: r.severity,
        title: r.title,
        message: r.message,
        triggeredAt: r.triggeredAt,
        acknowledgedAt: r.acknowledgedAt,
        resolvedAt: r.resolvedAt,
        device: r.deviceId ? (refs.get(r.deviceId) ?? null) : null,
      })),
      pagination: { page: after ? 1 : query.page, limit: query.limit, total, nextCursor: rows.length > query.limit && last ? encodePosition(last.triggeredAt, last.id) : null },
    };
  }

  /** The device each alert names, as the inbox shows it (a removed device: null). */
  private deviceRefs(ids: (string | null)[]) {
    const refs = new Map<string, { id: string; hostname: string; osType: string; status: string }>();
    for (const id of new Set(ids)) {
      if (id === null) continue;
      try {
        const d = this.devices.findVisible(SYSTEM, id);
        refs.set(id, { id: d.id, hostname: d.hostname, osType: d.osType, status: d.status });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
    return refs;
  }

  acknowledge(ctx: RequestContext, id: string) {
    return this.alerts.acknowledge(ctx, id);
  }

  resolve(ctx: RequestContext, id: string, note: string | undefined) {
    return this.alerts.resolve(ctx, id, note);
  }

  /** 05 wire notes "4.6": hostname search, lastSeenAt newest first, decommissioned only when its status is asked. */
  devicesList(ctx: RequestContext, query: z.infer<typeof MobileDeviceListQuerySchema>) {
    const base = {
      sort: 'lastSeen' as const,
      sortDir: 'desc' as const,
      ...(query.orgId ? { orgId: query.orgId } : {}),
      ...(query.status ? { status: [query.status] } : {}),
      ...(query.search ? { search: query.search } : {}),
    };
    const show = (d: ListedDevice) => ({ id: d.id, orgId: d.orgId, siteId: d.siteId, hostname: d.hostname, displayName: d.displayName, osType: d.osType, status: d.status, lastSeenAt: d.lastSeenAt });
    const next = (rows: ListedDevice[], more: boolean) => {
      const last = rows.at(-1);
      return more && last ? encodePosition(last.lastSeenAt ?? '', last.id) : null;
    };
    if (query.cursor !== undefined) {
      const at = decodePosition(query.cursor);
      const listed = this.devices.list(ctx, { ...base, limit: query.limit, cursor: encodeCursor(at.ts, at.id) });
      const total = this.devices.list(ctx, { ...base, page: 1, limit: 1 }).pagination.total;
      const more = 'nextCursor' in listed.pagination && listed.pagination.nextCursor !== null;
      return { data: listed.data.map(show), pagination: { page: 1, limit: query.limit, total, nextCursor: next(listed.data, more) } };
    }
    const listed = this.devices.list(ctx, { ...base, page: query.page, limit: query.limit });
    const { total } = listed.pagination;
    return { data: listed.data.map(show), pagination: { page: query.page, limit: query.limit, total, nextCursor: next(listed.data, query.page * query.limit < total) } };
  }

  /** 02 §4.6 live CPU, memory and disk: the last values the agent reported, and its recent samples. */
  metrics(ctx: RequestContext, id: string) {
    const device = this.devices.findVisible(ctx, id);
    const recent = this.devices.metrics(ctx, id, { limit: 60 }).data;
    return {
      deviceId: device.id,
      status: device.status,
      lastSeenAt: device.lastSeenAt,
      cpuPercent: device.cpuPercent,
      memoryPercent: device.ramPercent,
      diskPercent: device.diskPercent,
      recent,
    };
  }

  summary(ctx: RequestContext, orgId: string | undefined) {
    // One grouped count (devices/service.ts statusCounts), the same reach and rules as the device list's totals.
    const counts = this.devices.statusCounts(ctx, orgId || undefined);
    const count = (status: CountedState) => counts.get(status) ?? 0;
    let total = 0;
    for (const n of counts.values()) total += n;
    const devices = { total, online: count('online'), offline: count('offline'), maintenance: count('maintenance') };
    return { devices, alerts: this.reads.counts(ctx.caller, orgId) };
  }
}
