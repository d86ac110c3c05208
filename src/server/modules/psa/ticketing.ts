import { and, asc, eq, isNotNull, or, sql, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { systemContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { preparedQueries, rowById, rowQuery, updateRow } from '../../db/prepared.js';
import { psaConnections, psaTicketMappings } from '../../db/schema/index.js';
import { enqueueJob, type JobWorker, type RelayedEvent } from '../../jobs/queue.js';
import { recordAudit } from '../audit/recorder.js';
import { PsaCallError, PsaCredentialsError, PsaSettingsError, type PsaAdapter, type TicketInput, type TicketState } from './adapters.js';
import type { ConnectionRow, CredentialVault, MappingRow } from './connections.js';
import { SYNC_JOB } from './service.js';

const JOBS = { ticket: 'psa.alert-ticket', note: 'psa.alert-note' } as const;
/** Events after which an alert's open tickets get a note (docs/api-notes.md "PSA"). */
const NOTE_EVENTS = ['alert.escalated', 'alert.acknowledged', 'alert.resolved'];
/** One sync reads at most this many tickets (the least recently synced first); the next sync goes on. */
export const SYNC_BATCH = 500;

const SEVERITY_RANK = { info: 0, low: 1, medium: 2, high: 3, critical: 4 } as const;
type Severity = keyof typeof SEVERITY_RANK;
/** The least severity that opens a ticket when the connection's settings name none. */
export const DEFAULT_MIN_SEVERITY: Severity = 'high';

/** The fields of an alert.* event (ALERT-EVENTS.md) this module reads, parsed at the boundary. */
const AlertEventSchema = z.object({
  eventId: z.string(),
  eventType: z.string(),
  alertId: z.string().min(1),
  orgId: z.string().min(1),
  ruleId: z.string().nullable().catch(null),
  ruleName: z.string().nullable().catch(null),
  deviceId: z.string().nullable().catch(null),
  deviceName: z.string().nullable().catch(null),
  severity: z.enum(['critical', 'high', 'medium', 'low', 'info']).catch('info'),
  title: z.string().catch('Alert'),
  message: z.string().catch(''),
  triggeredAt: z.string().catch(''),
  resolutionNote: z.string().nullable().optional().catch(null),
  actorUserId: z.string().nullable().catch(null),
});
type AlertEvent = z.infer<typeof AlertEventSchema>;

/** The least severity rank a connection's settings open tickets for: none (empty) unless autoCreateTickets. */
function ticketingRank(settings: Record<string, unknown>): number[] {
  if (settings.autoCreateTickets !== true) return [];
  const min = typeof settings.minSeverity === 'string' && settings.minSeverity in SEVERITY_RANK ? (settings.minSeverity as Severity) : DEFAULT_MIN_SEVERITY;
  return [SEVERITY_RANK[min]];
}

/** ticketingRank of settings as stored (JSON text); unreadable settings open no ticket. */
function minSeverityRank(stored: string): number[] {
  try {
    const settings: unknown = JSON.parse(stored);
    return settings && typeof settings === 'object' ? ticketingRank(settings as Record<string, unknown>) : [];
  } catch {
    return [];
  }
}

/**
 * The ticketing statements, prepared once per database (db/prepared.ts): the next SYNC_BATCH mappings of a
 * connection (`connectionId`) to sync, the least recently synced first; an organization's (`orgId`) connections
 * that may open tickets; the open ticket of an alert (`alertId`) on a connection, else (`openOfSource`) the newest
 * of the same rule (`ruleId`) and device (`deviceId`); a mapping (`id`) moved to a new alert (`alertId`, at
 * `updatedAt`); a mapping stored unless the connection has that ticket (the insert names every column, as
 * drizzle's insert did); the open tickets of an alert (`alertId`) on enabled connections, with their connection.
 */
const ticketQueries = preparedQueries((db) => {
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const openOn = and(eq(psaTicketMappings.connectionId, sql.placeholder('connectionId')), eq(psaTicketMappings.open, true));
  const ofAlert = eq(psaTicketMappings.alertId, sql.placeholder('alertId'));
  const order = [sql`${psaTicketMappings.alertId} = ${sql.placeholder('alertId')} DESC`, sql`${psaTicketMappings.createdAt} DESC`];
  const openTicket = (where: SQL | undefined) => rowQuery(db, psaTicketMappings, where, { orderBy: order });
  return {
    toSync: db
      .select()
      .from(psaTicketMappings)
      .where(eq(psaTicketMappings.connectionId, sql.placeholder('connectionId')))
      .orderBy(sql`${psaTicketMappings.lastSyncAt} IS NOT NULL`, asc(psaTicketMappings.lastSyncAt), asc(psaTicketMappings.createdAt))
      .limit(SYNC_BATCH)
      .prepare(),
    ticketing: rowQuery(
      db,
      psaConnections,
      and(eq(psaConnections.orgId, sql.placeholder('orgId')), eq(psaConnections.enabled, true), eq(psaConnections.status, 'active'), isNotNull(psaConnections.credentialsEnc)),
    ),
    openOfAlert: openTicket(and(openOn, ofAlert)),
    openOfSource: openTicket(
      and(
        openOn,
        or(ofAlert, and(eq(psaTicketMappings.ruleId, sql.placeholder('ruleId')), eq(psaTicketMappings.deviceId, sql.placeholder('deviceId')))),
      ),
    ),
    moveToAlert: db
      .update(psaTicketMappings)
      .set({ alertId: value('alertId'), updatedAt: value('updatedAt') })
      .where(eq(psaTicketMappings.id, sql.placeholder('id')))
      .prepare(),
    store: db
      .insert(psaTicketMappings)
      .values({
        id: value('id'),
        connectionId: value('connectionId'),
        orgId: value('orgId'),
        alertId: value('alertId'),
        deviceId: value('deviceId'),
        ruleId: value('ruleId'),
        externalTicketId: value('externalTicketId'),
        externalTicketUrl: value('externalTicketUrl'),
        title: value('title'),
        status: value('status'),
        open: value('open'),
        lastSyncAt: value('lastSyncAt'),
        createdAt: value('createdAt'),
        updatedAt: value('updatedAt'),
      })
      .onConflictDoNothing()
      .prepare(),
    openOfAlertChanged: db
      .select()
      .from(psaTicketMappings)
      .innerJoin(psaConnections, eq(psaConnections.id, psaTicketMappings.connectionId))
      .where(and(ofAlert, eq(psaTicketMappings.open, true), eq(psaConnections.enabled, true)))
      .prepare(),
  };
});

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The PSA work of the job worker: the sync job (02 §3: running → completed | failed, pulling the state of the
 * mapped tickets), and tickets for alerts (issue 12): on alert.triggered every enabled, active connection of the
 * organization whose settings ask for it (autoCreateTickets, minSeverity) opens a ticket, unless the alert, or an
 * earlier alert of the same rule on the same device, already has an open ticket there: then a note is appended to
 * it instead. Escalation, acknowledgement and resolution append notes to the alert's open tickets.
 */
export class PsaTicketing {
  constructor(
    private readonly db: Db,
    private readonly vault: CredentialVault,
    private readonly publicUrl: string | undefined,
  ) {}

  register(worker: JobWorker): void {
    worker.handle(SYNC_JOB, (payload) => this.sync(String(payload.connectionId)));
    worker.subscribeBatch(['alert.triggered', ...NOTE_EVENTS], (tx, events, now) => this.enqueueFor(tx, events, now));
    worker.handle(JOBS.ticket, (payload) => this.onTriggered(AlertEventSchema.parse(payload)));
    worker.handle(JOBS.note, (payload) => this.onAlertChanged(AlertEventSchema.parse(payload)));
  }

  /**
   * A relayed batch of alert events to jobs, in the relaying transaction (issue 12): a job only where a connection of
   * the event's organization would act, so an organization without PSA costs its alerts no job. alert.triggered: an
   * enabled, active connection with credentials and autoCreateTickets whose minSeverity the alert meets (the job
   * checks again when it runs). Notes: any enabled connection of the organization (its mappings may come from a
   * ticket job not run yet, so they are not looked at here). One lookup per organization per batch.
   */
  enqueueFor(tx: Db, events: readonly RelayedEvent[], now: Date): void {
    const byOrg = new Map<string, { enabled: boolean; minRank: number }>();
    const lookup = tx.$client.prepare<[string]>(
      `SELECT enabled, status, credentials_enc IS NOT NULL AS sealed, settings FROM psa_connections WHERE org_id = ? AND enabled = 1`,
    );
    for (const event of events) {
      if (event.orgId === null) continue;
      let org = byOrg.get(event.orgId);
      if (!org) {
        const rows = lookup.all(event.orgId) as Array<{ status: string; sealed: number; settings: string }>;
        const ranks = rows.filter((c) => c.status === 'active' && c.sealed === 1).flatMap((c) => minSeverityRank(c.settings));
        org = { enabled: rows.length > 0, minRank: ranks.length ? Math.min(...ranks) : Infinity };
        byOrg.set(event.orgId, org);
      }
      if (!org.enabled) continue;
      const payload = { ...event.payload, eventId: event.id, eventType: event.type };
      if (event.type === 'alert.triggered') {
        const severity = event.payload.severity;
        const rank = typeof severity === 'string' && severity in SEVERITY_RANK ? SEVERITY_RANK[severity as Severity] : SEVERITY_RANK.info;
        if (rank >= org.minRank) enqueueJob(tx, JOBS.ticket, payload, { runAt: now });
      } else {
        enqueueJob(tx, JOBS.note, payload, { runAt: now });
      }
    }
  }

  private connection(id: string): ConnectionRow | undefined {
    return rowById(this.db, psaConnections, id);
  }

  private setSync(id: string, values: Partial<Pick<ConnectionRow, 'lastSyncStatus' | 'lastSyncError' | 'lastSyncAt'>>): void {
    updateRow(this.db, psaConnections, id, values);
  }

  /** One sync run. Failures are recorded on the connection (lastSyncError), not retried by the queue. */
  async sync(connectionId: string): Promise<void> {
    const row = this.connection(connectionId);
    if (!row) return;
    this.setSync(row.id, { lastSyncStatus: 'running' });
    let adapter: PsaAdapter;
    try {
      adapter = this.vault.adapterOf(row);
    } catch (err) {
      this.setSync(row.id, { lastSyncStatus: 'failed', lastSyncError: errorText(err) });
      return;
    }
    const mappings = ticketQueries(this.db).toSync.all({ connectionId: row.id });
    const failures: string[] = [];
    for (const mapping of mappings) {
      try {
        const state = await adapter.getTicket(mapping.externalTicketId);
        this.recordState(mapping, state);
      } catch (err) {
        failures.push(`${mapping.externalTicketId}: ${errorText(err)}`);
        // Credentials refused or the provider unreachable: the other tickets would fail the same way.
        if (err instanceof PsaCallError && (err.status === 401 || err.status === 403 || err.status === null)) break;
      }
    }
    const now = new Date().toISOString();
    if (failures.length) {
      const error = `${failures.length} of ${mappings.length} ticket(s) could not be read; ${failures[0] ?? ''}`.slice(0, 1000);
      this.setSync(row.id, { lastSyncStatus: 'failed', lastSyncError: error, lastSyncAt: now });
    } else {
      this.setSync(row.id, { lastSyncStatus: 'completed', lastSyncError: null, lastSyncAt: now });
    }
  }

  /** A ticket the provider no longer has is kept as `deleted`, closed. */
  private recordState(mapping: MappingRow, state: TicketState | null): void {
    const now = new Date().toISOString();
    updateRow(this.db, psaTicketMappings, mapping.id, {
      status: (state?.status ?? 'deleted').slice(0, 50),
      open: state?.open ?? false,
      ...(state ? { title: state.title.slice(0, 500) } : {}),
      lastSyncAt: now,
      updatedAt: now,
    });
  }

  /** The connections of an organization that open tickets for an alert of this severity. */
  private ticketingConnections(orgId: string, severity: Severity): ConnectionRow[] {
    return ticketQueries(this.db)
      .ticketing.all({ orgId })
      .filter((c) => ticketingRank(c.settings).some((min) => SEVERITY_RANK[severity] >= min));
  }

  private describe(alert: AlertEvent): TicketInput {
    const lines = [
      alert.message,
      '',
      `Severity: ${alert.severity}`,
      ...(alert.deviceName || alert.deviceId ? [`Device: ${alert.deviceName ?? ''}${alert.deviceId ? ` (${alert.deviceId})` : ''}`.trim()] : []),
      ...(alert.ruleName ? [`Rule: ${alert.ruleName}`] : []),
      ...(alert.triggeredAt ? [`Triggered: ${alert.triggeredAt}`] : []),
      `Alert: ${this.publicUrl ? `${this.publicUrl.replace(/\/+$/, '')}/alerts/${alert.alertId}` : alert.alertId}`,
    ];
    return { title: `[${alert.severity.toUpperCase()}] ${alert.title}`.slice(0, 255), description: lines.join('\n'), severity: alert.severity };
  }

  /** The open ticket of this alert on the connection, or of an earlier alert of the same rule and device. */
  private openTicketFor(connectionId: string, alert: AlertEvent): MappingRow | undefined {
    const queries = ticketQueries(this.db);
    const { alertId, ruleId, deviceId } = alert;
    return ruleId && deviceId ? queries.openOfSource.get({ connectionId, alertId, ruleId, deviceId }) : queries.openOfAlert.get({ connectionId, alertId });
  }

  /** alert.triggered: a ticket per ticketing connection, or a note on the open one. Idempotent: a replayed event
   * finds its own mapping and does nothing. A failing connection fails the job, which the queue retries. */
  async onTriggered(alert: AlertEvent): Promise<void> {
    const failures: string[] = [];
    for (const connection of this.ticketingConnections(alert.orgId, alert.severity)) {
      const open = this.openTicketFor(connection.id, alert);
      if (open?.alertId === alert.alertId) continue;
      try {
        const adapter = this.vault.adapterOf(connection);
        if (open) {
          const input = this.describe(alert);
          await adapter.appendNote(open.externalTicketId, `The alert triggered again: ${input.title}\n\n${input.description}`);
          ticketQueries(this.db).moveToAlert.run({ id: open.id, alertId: alert.alertId, updatedAt: new Date().toISOString() });
          this.audit('psa.ticket.note', connection, { alertId: alert.alertId, externalTicketId: open.externalTicketId });
        } else {
          const ticket = await adapter.createTicket(this.describe(alert));
          this.db.$client.transaction(() => {
            ticketQueries(this.db).store.run({
              id: newId(),
              connectionId: connection.id,
              orgId: connection.orgId,
              alertId: alert.alertId,
              deviceId: alert.deviceId,
              ruleId: alert.ruleId,
              externalTicketId: ticket.externalTicketId.slice(0, 100),
              externalTicketUrl: ticket.externalTicketUrl,
              title: ticket.title.slice(0, 500),
              status: ticket.status.slice(0, 50),
              open: ticket.open ? 1 : 0,
              lastSyncAt: new Date().toISOString(),
              createdAt: new Date().toISOString(),
              updatedAt: new Date().toISOString(),
            });
            this.audit('psa.ticket.create', connection, { alertId: alert.alertId, externalTicketId: ticket.externalTicketId });
          })();
        }
      } catch (err) {
        if (!(err instanceof PsaCallError || err instanceof PsaCredentialsError || err instanceof PsaSettingsError)) throw err;
        this.audit('psa.ticket.create', connection, { alertId: alert.alertId }, err.message);
        failures.push(`${connection.name}: ${err.message}`);
      }
    }
    if (failures.length) throw new Error(`PSA ticket for alert ${alert.alertId} failed on ${failures.join('; ')}`);
  }

  /** Escalated, acknowledged or resolved: a note on each open ticket of the alert. */
  async onAlertChanged(alert: AlertEvent): Promise<void> {
    const open = ticketQueries(this.db).openOfAlertChanged.all({ alertId: alert.alertId });
    const what = alert.eventType.replace(/^alert\./, '');
    for (const { psa_connections: connection, psa_ticket_mappings: mapping } of open) {
      const note = `The alert was ${what}: ${alert.title}${alert.resolutionNote ? `\n\n${alert.resolutionNote}` : ''}`;
      try {
        await this.vault.adapterOf(connection).appendNote(mapping.externalTicketId, note);
        this.audit('psa.ticket.note', connection, { alertId: alert.alertId, externalTicketId: mapping.externalTicketId, event: alert.eventType });
      } catch (err) {
        if (!(err instanceof PsaCallError || err instanceof PsaCredentialsError)) throw err;
        this.audit('psa.ticket.note', connection, { alertId: alert.alertId, externalTicketId: mapping.externalTicketId, event: alert.eventType }, err.message);
      }
    }
  }

  private audit(action: string, connection: ConnectionRow, details: Record<string, unknown>, errorMessage?: string): void {
    const write = () => recordAudit(this.db, systemContext(), {
      action,
      resourceType: 'psa_connection',
      resourceId: connection.id,
      resourceName: connection.name,
      orgId: connection.orgId,
      details: { provider: connection.provider, ...details },
      ...(errorMessage !== undefined ? { result: 'failure' as const, errorMessage: errorMessage.slice(0, 1000) } : {}),
    });
    this.db.$client.transaction(write)();
  }
}
