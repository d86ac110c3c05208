import { and, desc, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  PsaConnectionCreateSchema,
  PsaConnectionListQuerySchema,
  PsaConnectionUpdateSchema,
  PsaStatusBodySchema,
  PsaTicketListQuerySchema,
} from '../../../contract/psa.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, preparedQueries, rowById, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { psaConnections, psaTicketMappings } from '../../db/schema/index.js';
import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';
import { badRequest, DomainError, forbidden, notFound } from '../../errors.js';
import { enqueueJob } from '../../jobs/queue.js';
import { paged, preparedPages } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { listOrgReach } from '../notifications/org-scope.js';
import { resolveWriteOrg } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';
import { missingSettings, PsaCallError, PsaCredentialsError } from './adapters.js';
import { noCredentials, presentConnection, presentTicket, type ConnectionRow, type CredentialVault } from './connections.js';

/** The durable job of `sync` (ticketing.ts handles it). */
export const SYNC_JOB = 'psa.sync';

type CreateBody = z.infer<typeof PsaConnectionCreateSchema>;
type UpdateBody = z.infer<typeof PsaConnectionUpdateSchema>;

const baseUrlRejected = (reason: string) => new DomainError('invalid', `credentials.baseUrl rejected: ${reason}`, 'PSA_BASE_URL_REJECTED');

/** A page of connections, per shape: 'o' within the organizations of `orgIds` (JSON array), 'p' of one `provider`. */
const connectionPageOf = preparedPages(psaConnections, [desc(psaConnections.updatedAt), sql`rowid DESC`], (shape) =>
  and(
    ...shapeConditions(shape, {
      o: () => inJson(psaConnections.orgId, 'orgIds'),
      p: () => eq(psaConnections.provider, sql.placeholder('provider')),
    }),
  ),
);

/** A page of ticket mappings, per shape: 'c' of one connection (`connectionId`), 'o' within the organizations of
 * `orgIds` (JSON array), 's' of one `status`. */
const ticketPageOf = preparedPages(psaTicketMappings, [desc(psaTicketMappings.updatedAt), sql`rowid DESC`], (shape) =>
  and(
    ...shapeConditions(shape, {
      c: () => eq(psaTicketMappings.connectionId, sql.placeholder('connectionId')),
      o: () => inJson(psaTicketMappings.orgId, 'orgIds'),
      s: () => eq(psaTicketMappings.status, sql.placeholder('status')),
    }),
  ),
);

/** A connection's (`id`) ticket mappings removed, its sync marked queued, its custom status set (`status`, at
 * `updatedAt`), prepared once per database (db/prepared.ts). */
const connectionWrites = preparedQueries((db) => {
  const ofId = eq(psaConnections.id, sql.placeholder('id'));
  return {
    deleteMappings: db
      .delete(psaTicketMappings)
      .where(eq(psaTicketMappings.connectionId, sql.placeholder('id')))
      .prepare(),
    syncQueued: db.update(psaConnections).set({ lastSyncStatus: 'queued', lastSyncError: null }).where(ofId).prepare(),
    status: db
      .update(psaConnections)
      .set({ status: sql`${sql.placeholder('status')}`, updatedAt: sql`${sql.placeholder('updatedAt')}` })
      .where(ofId)
      .prepare(),
  };
});

/**
 * PSA connections (02 §2.8, §3, §4.4): CRUD within the caller's organizations, credentials sealed with SecretBox
 * and never returned, `test` through the provider adapter and the outbound guard, `sync` as a durable job, the
 * custom status, and the ticket lists. Tickets are opened by ticketing.ts.
 */
export class PsaService {
  constructor(
    private readonly db: Db,
    private readonly vault: CredentialVault,
    private readonly tenancy: TenancyService,
    private readonly outbound: OutboundClient,
  ) {}

  /** 05-wire-notes: 404 `PSA connection not found`, 403 `Access denied` out of the caller's organizations. */
  private find(ctx: RequestContext, id: string): ConnectionRow {
    const row = rowById(this.db, psaConnections, id);
    if (!row) throw notFound('PSA connection not found', 'PSA_CONNECTION_NOT_FOUND');
    if (!this.tenancy.canAccessOrg(ctx, row.orgId)) throw forbidden('Access denied', 'ACCESS_DENIED');
    return row;
  }

  private audit(ctx: RequestContext, action: string, row: ConnectionRow, details: Record<string, unknown> = {}, errorMessage?: string): void {
    recordAudit(this.db, ctx, {
      action,
      resourceType: 'psa_connection',
      resourceId: row.id,
      resourceName: row.name,
      orgId: row.orgId,
      details: { provider: row.provider, ...details },
      ...(errorMessage !== undefined ? { result: 'failure' as const, errorMessage } : {}),
    });
  }

  /** A baseUrl in the credentials must pass the outbound guard, resolution included (as a webhook URL). */
  private async checkBaseUrl(credentials: Record<string, unknown> | undefined): Promise<void> {
    const baseUrl = credentials?.baseUrl;
    if (baseUrl === undefined) return;
    if (typeof baseUrl !== 'string') throw baseUrlRejected('must be a string');
    try {
      await this.outbound.checkUrl(baseUrl, { httpsOnly: true });
    } catch (err) {
      if (err instanceof OutboundBlockedError) throw baseUrlRejected(err.reason);
      throw err;
    }
  }

  /** Auto-created tickets need the provider's placement settings (docs/api-notes.md "PSA"). */
  private checkSettings(provider: ConnectionRow['provider'], settings: Record<string, unknown>): void {
    if (settings.autoCreateTickets !== true) return;
    const missing = missingSettings(provider, settings);
    if (missing.length) throw badRequest(`${provider} needs settings.${missing.join(', settings.')} when autoCreateTickets is true`, 'PSA_SETTINGS_INCOMPLETE');
  }

  list(ctx: RequestContext, query: z.infer<typeof PsaConnectionListQuerySchema>) {
    const reach = listOrgReach(this.tenancy, ctx, query.orgId);
    if (reach === null) return paged([], query, 0);
    const shape = reach.shape + shapeOf({ p: query.provider });
    const { rows, total } = connectionPageOf(this.db, shape, { orgIds: reach.orgIds, provider: query.provider }, query);
    return paged(rows.map(presentConnection), query, total);
  }

  get(ctx: RequestContext, id: string) {
    return { data: presentConnection(this.find(ctx, id)) };
  }

  async create(ctx: RequestContext, body: CreateBody) {
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
    this.checkSettings(body.provider, body.settings);
    await this.checkBaseUrl(body.credentials);
    const credentialsEnc = this.vault.seal(body.credentials);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, psaConnections, {
        orgId: org.id,
        provider: body.provider,
        name: body.name,
        credentialsEnc,
        settings: body.settings,
        enabled: body.enabled,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'psa.connection.create', row, { hasCredentials: credentialsEnc !== null });
      return presentConnection(row);
    })();
  }

  async update(ctx: RequestContext, id: string, body: UpdateBody) {
    if (Object.values(body).every((v) => v === undefined)) throw badRequest('No updates provided');
    const current = this.find(ctx, id);
    if (body.settings !== undefined) this.checkSettings(current.provider, body.settings);
    await this.checkBaseUrl(body.credentials);
    // 02 §4.4: credentials are replaced as a whole, in one UPDATE.
    const credentials = body.credentials !== undefined ? { credentialsEnc: this.vault.seal(body.credentials) } : {};
    return this.db.$client.transaction(() => {
      const row = updateRow(this.db, psaConnections, id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...credentials,
        ...(body.settings !== undefined ? { settings: body.settings } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
        updatedAt: new Date().toISOString(),
      });
      if (!row) throw notFound('PSA connection not found', 'PSA_CONNECTION_NOT_FOUND');
      this.audit(ctx, 'psa.connection.update', row, { changed: Object.keys(body).filter((k) => body[k as keyof UpdateBody] !== undefined) });
      return presentConnection(row);
    })();
  }

  /** 02 §4.4: removes the credentials and the ticket mappings irrecoverably (the rows are deleted). */
  delete(ctx: RequestContext, id: string): { success: true } {
    const row = this.find(ctx, id);
    this.db.$client.transaction(() => {
      const mappings = connectionWrites(this.db).deleteMappings.run({ id }).changes;
      deleteById(this.db, psaConnections, id);
      this.audit(ctx, 'psa.connection.delete', row, { ticketMappings: mappings });
    })();
    return { success: true };
  }

  /** 02 §4.4 test: one authenticated call to the provider; records lastTestedAt and verified|failed. */
  async test(ctx: RequestContext, id: string): Promise<{ success: boolean; message?: string; error?: string }> {
    const row = this.find(ctx, id);
    if (row.credentialsEnc === null) throw noCredentials();
    let outcome: { success: boolean; message?: string; error?: string };
    let refusal: DomainError | undefined;
    try {
      outcome = { success: true, message: await this.vault.adapterOf(row).testCredentials() };
    } catch (err) {
      if (err instanceof PsaCredentialsError) throw badRequest(err.message, 'PSA_CREDENTIALS_MISSING');
      if (!(err instanceof PsaCallError)) throw err;
      outcome = { success: false, error: err.message };
      if (err.message.startsWith('credentials.baseUrl rejected')) refusal = baseUrlRejected(err.message.slice('credentials.baseUrl rejected: '.length));
    }
    const now = new Date().toISOString();
    this.db.$client.transaction(() => {
      updateRow(this.db, psaConnections, id, {
        syncSettings: { lastTestedAt: now, testStatus: outcome.success ? 'verified' : 'failed', testMessage: outcome.message ?? outcome.error ?? null },
      });
      this.audit(ctx, 'psa.connection.test', row, { success: outcome.success }, outcome.error);
    })();
    if (refusal) throw refusal;
    return outcome;
  }

  /** 02 §3 PSA sync: queued now, worked by the job (running → completed | failed). A sync asked for while one is
   * queued or running joins it. */
  sync(ctx: RequestContext, id: string) {
    const row = this.find(ctx, id);
    if (row.credentialsEnc === null) throw noCredentials();
    const now = new Date().toISOString();
    this.db.$client.transaction(() => {
      if (enqueueJob(this.db, SYNC_JOB, { connectionId: id }, { uniqueKey: `psa-sync:${id}`, maxAttempts: 3 })) {
        connectionWrites(this.db).syncQueued.run({ id });
      }
      this.audit(ctx, 'psa.connection.sync', row);
    })();
    return { id: row.id, provider: row.provider, syncedAt: now, status: 'queued' as const };
  }

  setStatus(ctx: RequestContext, id: string, body: z.infer<typeof PsaStatusBodySchema>) {
    const row = this.find(ctx, id);
    this.db.$client.transaction(() => {
      connectionWrites(this.db).status.run({ id, status: body.status, updatedAt: new Date().toISOString() });
      this.audit(ctx, 'psa.connection.status', row, { from: row.status, to: body.status });
    })();
    return { success: true as const, status: body.status };
  }

  connectionTickets(ctx: RequestContext, id: string, query: Omit<z.infer<typeof PsaTicketListQuerySchema>, 'orgId'>) {
    this.find(ctx, id);
    return this.ticketPage(`c${shapeOf({ s: query.status })}`, { connectionId: id, status: query.status }, query);
  }

  tickets(ctx: RequestContext, query: z.infer<typeof PsaTicketListQuerySchema>) {
    const reach = listOrgReach(this.tenancy, ctx, query.orgId);
    if (reach === null) return paged([], query, 0);
    return this.ticketPage(reach.shape + shapeOf({ s: query.status }), { orgIds: reach.orgIds, status: query.status }, query);
  }

  private ticketPage(shape: string, values: Record<string, unknown>, query: { page: number; limit: number }) {
    const { rows, total } = ticketPageOf(this.db, shape, values, query);
    return paged(rows.map(presentTicket), query, total);
  }
}
