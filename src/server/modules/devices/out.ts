import { sql, type SQL } from 'drizzle-orm';
import { devices } from '../../db/schema/index.js';
import { badRequest } from '../../errors.js';
import { FilterError } from '../filters/compile.js';

export type DeviceRow = typeof devices.$inferSelect;

/** A device as lists and reads show it (05 wire notes "4.7" row); the token hash and raw blobs stay behind. */
export function deviceOut(row: DeviceRow) {
  return {
    id: row.id,
    orgId: row.orgId,
    siteId: row.siteId,
    agentId: row.agentId,
    hostname: row.hostname,
    displayName: row.displayName,
    osType: row.osType,
    osVersion: row.osVersion,
    osBuild: row.osBuild,
    architecture: row.architecture,
    agentVersion: row.agentVersion,
    status: row.status,
    lastSeenAt: row.lastSeenAt,
    enrolledAt: row.enrolledAt,
    tags: row.tags,
    customFields: row.customFields,
    lastUser: row.lastUser,
    uptimeSeconds: row.uptimeSeconds,
    isHeadless: row.isHeadless,
    deviceRole: row.deviceRole,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    cpuPercent: row.cpuPercent,
    ramPercent: row.ramPercent,
    hardware: { cpuModel: row.hwCpuModel, cpuCores: row.hwCpuCores, ramTotalMb: row.hwRamTotalMb, diskTotalGb: row.hwDiskTotalGb },
    metrics: row.lastMetrics,
  };
}
export type DeviceOut = ReturnType<typeof deviceOut>;

export type SortBy = 'hostname' | 'lastSeen' | 'enrolled';

/** The sort key column; a device never seen sorts as the empty string (first ascending). */
export function sortKey(by: SortBy): SQL {
  if (by === 'lastSeen') return sql`coalesce(${devices.lastSeenAt}, '')`;
  if (by === 'enrolled') return sql`${devices.enrolledAt}`;
  return sql`${devices.hostname}`;
}

export function sortValue(row: DeviceRow, by: SortBy): string {
  if (by === 'lastSeen') return row.lastSeenAt ?? '';
  if (by === 'enrolled') return row.enrolledAt;
  return row.hostname;
}

export function encodeCursor(value: string, id: string): string {
  return Buffer.from(JSON.stringify([value, id])).toString('base64url');
}

export function decodeCursor(cursor: string): [string, string] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') return [parsed[0], parsed[1]];
  } catch {
    // fall through
  }
  throw badRequest('Invalid cursor', 'INVALID_CURSOR');
}

/** The `filter` query parameter: a condition tree as JSON. */
export function parseInlineFilter(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FilterError('Invalid filter', ['filter: not valid JSON']);
  }
}

/** Custom field values merged key by key; null removes a key. */
export function mergeCustomFields(current: Record<string, unknown>, change: Record<string, unknown>): Record<string, unknown> {
  const next = { ...current };
  for (const [k, v] of Object.entries(change)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  return next;
}
