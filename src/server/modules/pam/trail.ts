import type { ElevationActor, ElevationEventType } from '../../../contract/pam.js';
import type { Db } from '../../db/connection.js';
import { elevationAuditEvents } from '../../db/schema/index.js';
import { newId } from '../../db/ids.js';
import { insertRow } from '../../db/prepared.js';

/**
 * Writes to the elevation audit trail that have started and not yet committed, by the time their rows are
 * recorded at. The export's settle watermark is capped at the oldest of them, so a page never passes over a
 * row that commits later with an earlier recorded time (01 §4.9 "X-Settled-Through", 04 "Audit export").
 *
 * better-sqlite3 commits synchronously, so within this process a write is never observed half-done; the
 * tracker keeps the rule true should a write ever span an await, and tests can hold one open.
 */
export class InFlightWrites {
  private readonly open = new Map<number, string>();
  private next = 0;

  begin(recordedAt: string): number {
    const token = this.next++;
    this.open.set(token, recordedAt);
    return token;
  }

  end(token: number): void {
    this.open.delete(token);
  }

  /** The recorded time of the oldest write still in progress, or null. */
  oldest(): string | null {
    let oldest: string | null = null;
    for (const at of this.open.values()) if (oldest === null || at < oldest) oldest = at;
    return oldest;
  }
}

export interface TrailEvent {
  elevationRequestId: string;
  orgId: string;
  eventType: ElevationEventType;
  actor: ElevationActor;
  actorUserId?: string | null;
  occurredAt?: string;
  details?: Record<string, unknown>;
}

/** The elevation trail: every change of a request writes its events in the change's own transaction. */
export class ElevationTrail {
  readonly inFlight = new InFlightWrites();

  constructor(private readonly db: Db) {}

  /**
   * Runs `fn` in one transaction; `recordedAt` is the time every trail row it appends is recorded at (the
   * export's clock), taken before the transaction starts and tracked until it has committed or rolled back.
   */
  write<T>(fn: (recordedAt: string, append: (event: TrailEvent) => void) => T): T {
    const recordedAt = new Date().toISOString();
    const token = this.inFlight.begin(recordedAt);
    try {
      return this.db.$client.transaction(() =>
        fn(recordedAt, (event) => {
          insertRow(this.db, elevationAuditEvents, {
            id: newId(),
            orgId: event.orgId,
            elevationRequestId: event.elevationRequestId,
            eventType: event.eventType,
            actor: event.actor,
            actorUserId: event.actorUserId ?? null,
            occurredAt: event.occurredAt ?? recordedAt,
            createdAt: recordedAt,
            details: event.details ?? {},
          });
        }),
      )();
    } finally {
      this.inFlight.end(token);
    }
  }
}
