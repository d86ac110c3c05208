import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { insertRow } from '../../db/prepared.js';
import { elevationRequests } from '../../db/schema/index.js';
import { publishEvent } from '../../jobs/queue.js';
import { recordAudit, type AuditEntry } from '../audit/recorder.js';
import type { ElevationRow } from './requests-queries.js';
import type { TrailEvent } from './trail.js';

/** The elevation.* bus events (01 §6). */
export type ElevationBusEvent = 'elevation.approved' | 'elevation.denied' | 'elevation.revoked' | 'elevation.expired';

/** One change of a request's state: its trail event, its bus event (if it is one) and its audit entry. */
export interface Transition {
  trail: Omit<TrailEvent, 'elevationRequestId' | 'orgId'>;
  bus?: { type: ElevationBusEvent; extra?: Record<string, unknown> };
  audit?: Omit<AuditEntry, 'resourceType' | 'resourceId' | 'resourceName' | 'orgId'>;
}

/** The payload of the elevation.* bus events (01 §6). */
function eventPayload(row: ElevationRow, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    elevationRequestId: row.id,
    orgId: row.orgId,
    deviceId: row.deviceId,
    siteId: row.siteId,
    flowType: row.flowType,
    status: row.status,
    enforcementStatus: row.enforcementStatus,
    decisionSource: row.decisionSource,
    decidedAssuranceLevel: row.decidedAssuranceLevel,
    pamRuleId: row.pamRuleId,
    expiresAt: row.expiresAt,
    revision: row.revision,
    ...extra,
  };
}

export function resourceNameOf(row: Pick<ElevationRow, 'toolName' | 'targetExecutablePath' | 'flowType'>): string {
  return row.toolName ?? row.targetExecutablePath ?? row.flowType;
}

type Placed = 'orgId' | 'deviceId' | 'siteId' | 'requestedAt' | 'createdAt' | 'updatedAt';

/** Inserts a new request for a device, requested at `recordedAt` (the trail's clock). */
export function insertRequest(
  db: Db,
  device: { id: string; orgId: string; siteId: string | null },
  recordedAt: string,
  values: Omit<typeof elevationRequests.$inferInsert, Placed>,
): ElevationRow {
  return insertRow(db, elevationRequests, {
    orgId: device.orgId,
    deviceId: device.id,
    siteId: device.siteId,
    requestedAt: recordedAt,
    createdAt: recordedAt,
    updatedAt: recordedAt,
    ...values,
  });
}

/**
 * Records a transition of `row` (already written) inside the caller's trail transaction: the trail event, the
 * bus event and the audit entry, so every change of a request leaves the same three traces in one commit.
 */
export function recordTransition(
  db: Db,
  ctx: RequestContext,
  append: (event: TrailEvent) => void,
  row: ElevationRow,
  transition: Transition,
  resourceName: string = resourceNameOf(row),
): void {
  append({ elevationRequestId: row.id, orgId: row.orgId, ...transition.trail });
  if (transition.bus) publishEvent(db, transition.bus.type, eventPayload(row, transition.bus.extra), row.orgId);
  if (transition.audit) {
    recordAudit(db, ctx, {
      resourceType: 'elevation_request',
      resourceId: row.id,
      resourceName,
      orgId: row.orgId,
      ...transition.audit,
    });
  }
}
