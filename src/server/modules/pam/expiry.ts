import { and, inArray, lte, sql } from 'drizzle-orm';
import type { EnforcementStatus } from '../../../contract/pam.js';
import { systemContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
import { elevationRequests } from '../../db/schema/index.js';
import { ACTIVE_STATUSES } from './requests-queries.js';
import { recordTransition } from './transitions.js';
import type { ElevationTrail } from './trail.js';

/** Every elevation in force whose expiresAt is at or before `now` moves to expired, recorded at `recordedAt`
 * (returned): prepared once per database. */
const expireDueOf = preparedQueries((db) =>
  db
    .update(elevationRequests)
    .set({
      status: 'expired',
      enforcementStatus: 'cleanup_pending' satisfies EnforcementStatus,
      expiredAt: sql`${sql.placeholder('recordedAt')}`,
      revision: sql`${elevationRequests.revision} + 1`,
      updatedAt: sql`${sql.placeholder('recordedAt')}`,
    })
    .where(and(inArray(elevationRequests.status, [...ACTIVE_STATUSES]), lte(elevationRequests.expiresAt, sql.placeholder('now'))))
    .returning()
    .prepare(),
);

/** The expiry enforcer (01 §4.9: "a time-bound expiry enforcer is the safety net"). */
export class ElevationExpiry {
  constructor(
    private readonly db: Db,
    private readonly trail: ElevationTrail,
  ) {}

  /** Moves every elevation in force whose expiresAt has passed (by `now`) to expired, including those that
   * expired while the server was down; the device is told to clean up. Returns how many. */
  expireDue(now: Date = new Date()): number {
    const system = systemContext('pam.expire-elevations');
    return this.trail.write((recordedAt, append) => {
      const rows = expireDueOf(this.db).all({ recordedAt, now: now.toISOString() });
      for (const row of rows) {
        recordTransition(this.db, system, append, row, {
          trail: {
            eventType: 'expired',
            actor: 'system',
            occurredAt: row.expiresAt ?? recordedAt,
            details: { expiresAt: row.expiresAt },
          },
          bus: { type: 'elevation.expired' },
          audit: {
            action: 'pam.elevation_request.expire',
            partnerId: null,
            details: { expiresAt: row.expiresAt, deviceId: row.deviceId },
          },
        });
      }
      return rows.length;
    });
  }
}
