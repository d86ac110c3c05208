import { randomUUID } from 'node:crypto';
import { and, desc, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  DeliveryListQuerySchema,
  WebhookCreateSchema,
  WebhookListQuerySchema,
  WebhookRotateSecretSchema,
  WebhookTestSchema,
  WebhookUpdateSchema,
} from '../../../contract/webhooks.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, preparedQueries, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { webhookDeliveries, webhooks } from '../../db/schema/index.js';
import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';
import { badRequest, DomainError, notFound } from '../../errors.js';
import { paged, preparedPages, type Paged } from '../../lib/paging.js';
import type { SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import { visibleOr404 } from '../shared/visible.js';
import { inLiveOrgs, readOrgIds, requireOrg, resolveWriteOrg } from '../tenancy/access.js';
import { createDelivery, TEST_EVENT, type DeliveryRow, type WebhookDispatcher, type WebhookRow } from './delivery.js';

const MASK = '********';

/** The webhook as the API shows it (05-wire-notes 4.3): no secret (hasSecret), header values masked, the URL
 * without userinfo, query or fragment. */
export function presentWebhook(row: WebhookRow) {
  const url = new URL(row.url);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  const now = new Date().toISOString();
  return {
    id: row.id,
    orgId: row.orgId,
    name: row.name,
    url: url.toString(),
    events: row.events,
    headers: row.headers.map(({ key }) => ({ key, value: MASK })),
    status: row.status,
    hasSecret: row.secretEnc !== null,
    previousSecretExpiresAt: row.previousSecretEnc && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now ? row.previousSecretExpiresAt : null,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    lastDeliveryAt: row.lastDeliveryAt,
  };
}

/** 05-wire-notes 4.3: the guard's reason as the deployed service words it. */
function urlRefusal(reason: string): DomainError {
  let detail: string;
  if (reason === 'Invalid URL format') detail = reason;
  else if (reason.startsWith('URL must use')) detail = 'Webhook URL must use HTTPS';
  else if (reason.includes('could not be resolved')) detail = 'Webhook URL hostname could not be resolved';
  else if (reason.includes('resolves to blocked address space')) detail = `Webhook URL resolves to blocked address space: ${reason.split(': ').at(-1) ?? ''}`;
  else if (/localhost name|local-network/.test(reason)) detail = 'Webhook URL cannot target localhost or local network hostnames';
  else detail = 'Webhook URL cannot target private, loopback, or link-local addresses';
  return new DomainError('invalid', 'Invalid webhook URL', 'INVALID_WEBHOOK_URL', { details: [detail, reason] });
}

/** A webhook's deliveryStats (02 §2.7), one of its deliveries (`id`, `webhookId`), and the removal of all of them
 * (`webhookId`), prepared once per database (db/prepared.ts). */
const webhookReads = preparedQueries((db) => {
  const count = (status: string) => sql<number>`coalesce(sum(case when ${webhookDeliveries.status} = ${status} then 1 else 0 end), 0)`;
  return {
    stats: db
      .select({
        total: sql<number>`count(*)`,
        pending: count('pending'),
        delivered: count('delivered'),
        failed: count('failed'),
        retrying: count('retrying'),
        lastDeliveredAt: sql<string | null>`max(${webhookDeliveries.deliveredAt})`,
      })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, sql.placeholder('webhookId')))
      .prepare(),
    delivery: rowQuery(db, webhookDeliveries, and(eq(webhookDeliveries.id, sql.placeholder('id')), eq(webhookDeliveries.webhookId, sql.placeholder('webhookId')))),
    deleteDeliveries: db
      .delete(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, sql.placeholder('webhookId')))
      .prepare(),
  };
});

/** A page of one webhook's deliveries (`webhookId`); shape 's' of one `status` only. */
const deliveryPageOf = preparedPages(webhookDeliveries, [desc(webhookDeliveries.createdAt), sql`rowid DESC`], (shape) =>
  and(
    eq(webhookDeliveries.webhookId, sql.placeholder('webhookId')),
    ...shapeConditions(shape, { s: () => eq(webhookDeliveries.status, sql.placeholder('status')) }),
  ),
);

/** A page of webhooks within every live organization in shape 'l' (a system caller's reach), else within the
 * organizations of the JSON array `orgIds`; shape 's' of one `status` only. */
const webhookPageOf = preparedPages(webhooks, [desc(webhooks.createdAt), sql`rowid DESC`], (shape) =>
  and(
    shape.includes('l') ? inLiveOrgs(webhooks.orgId) : inJson(webhooks.orgId, 'orgIds'),
    ...shapeConditions(shape, { s: () => eq(webhooks.status, sql.placeholder('status')) }),
  ),
);

/**
 * Outgoing webhooks (02 §2.7, §3, §4.3): CRUD within the caller's organizations, the URL checked by the outbound
 * guard (with DNS) whenever it is set, the secret sealed with SecretBox, manual retry and test deliveries.
 * Delivery itself is the dispatcher's (delivery.ts).
 */
export class WebhooksService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly outbound: OutboundClient,
    /** The delivery pipeline (the worker runs it; tests call an attempt directly). */
    readonly dispatcher: WebhookDispatcher,
  ) {}

  private async checkedUrl(raw: string): Promise<string> {
    try {
      return (await this.outbound.checkUrl(raw, { httpsOnly: true })).toString();
    } catch (err) {
      if (err instanceof OutboundBlockedError) throw urlRefusal(err.reason);
      throw err;
    }
  }

  private find(ctx: RequestContext, id: string): WebhookRow {
    const row = rowById(this.db, webhooks, id);
    return visibleOr404(row, (r) => requireOrg(this.db, ctx.caller, r.orgId), () => notFound('Webhook not found'));
  }

  private audit(ctx: RequestContext, action: string, row: WebhookRow, details: Record<string, unknown> = {}): void {
    recordAudit(this.db, ctx, { action, resourceType: 'webhook', resourceId: row.id, resourceName: row.name, orgId: row.orgId, details });
  }

  list(ctx: RequestContext, query: z.infer<typeof WebhookListQuerySchema>): Paged<ReturnType<typeof presentWebhook>> {
    // null: every live organization (a system caller without orgId, shape `l`).
    const orgIds = readOrgIds(this.db, ctx.caller, query.orgId);
    if (orgIds?.length === 0) return paged([], query, 0);
    const values = { orgIds: orgIds && JSON.stringify(orgIds), status: query.status };
    const { rows, total } = webhookPageOf(this.db, shapeOf({ l: orgIds === null, s: query.status }), values, query);
    return paged(rows.map(presentWebhook), query, total);
  }

  get(ctx: RequestContext, id: string) {
    const row = this.find(ctx, id);
    return { ...presentWebhook(row), deliveryStats: this.stats(row.id) };
  }

  /** 02 §2.7 deliveryStats. */
  private stats(webhookId: string) {
    const row = webhookReads(this.db).stats.get({ webhookId });
    return row ?? { total: 0, pending: 0, delivered: 0, failed: 0, retrying: 0, lastDeliveredAt: null };
  }

  async create(ctx: RequestContext, body: z.infer<typeof WebhookCreateSchema>) {
    const orgId = resolveWriteOrg(this.db, ctx.caller, body.orgId).id;
    const url = await this.checkedUrl(body.url);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, webhooks, {
        orgId,
        name: body.name,
        url,
        secretEnc: this.box.seal(body.secret),
        events: body.events,
        headers: body.headers,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'webhook.create', row, { url: presentWebhook(row).url, events: row.events });
      return presentWebhook(row);
    })();
  }

  async update(ctx: RequestContext, id: string, body: z.infer<typeof WebhookUpdateSchema>) {
    if (Object.values(body).every((v) => v === undefined)) throw badRequest('No updates provided');
    const current = this.find(ctx, id);
    // 05-wire-notes: an unchanged URL is not re-checked.
    const url = body.url !== undefined && body.url !== current.url ? await this.checkedUrl(body.url) : undefined;
    // A masked value (only `*`) keeps the stored value of that header.
    const headers = body.headers?.map(({ key, value }) =>
      /^\*+$/.test(value) ? { key, value: current.headers.find((h) => h.key.toLowerCase() === key.toLowerCase())?.value ?? value } : { key, value },
    );
    return this.db.$client.transaction(() => {
      const row = updateRow(this.db, webhooks, id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(url !== undefined ? { url } : {}),
        ...(body.secret !== undefined ? { secretEnc: this.box.seal(body.secret), previousSecretEnc: null, previousSecretExpiresAt: null } : {}),
        ...(body.events !== undefined ? { events: body.events } : {}),
        ...(headers !== undefined ? { headers } : {}),
        ...(body.status !== undefined ? { status: body.status } : {}),
        updatedAt: new Date().toISOString(),
      });
      if (!row) throw notFound('Webhook not found');
      const changed = Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined);
      this.audit(ctx, 'webhook.update', row, { changed });
      // Deliveries that waited while the webhook was paused or failed are sent now.
      if (body.status === 'active' && current.status !== 'active') this.dispatcher.requeueStranded(row.id);
      return presentWebhook(row);
    })();
  }

  /** Replaces the secret; the old one keeps signing (a second signature) for `overlapSeconds`. */
  rotateSecret(ctx: RequestContext, id: string, body: z.infer<typeof WebhookRotateSecretSchema>) {
    const current = this.find(ctx, id);
    const now = Date.now();
    return this.db.$client.transaction(() => {
      const row = updateRow(this.db, webhooks, id, {
        secretEnc: this.box.seal(body.secret),
        previousSecretEnc: body.overlapSeconds > 0 ? current.secretEnc : null,
        previousSecretExpiresAt: body.overlapSeconds > 0 && current.secretEnc ? new Date(now + body.overlapSeconds * 1000).toISOString() : null,
        updatedAt: new Date(now).toISOString(),
      });
      if (!row) throw notFound('Webhook not found');
      this.audit(ctx, 'webhook.rotate_secret', row, { overlapSeconds: body.overlapSeconds });
      return presentWebhook(row);
    })();
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    const row = this.find(ctx, id);
    this.db.$client.transaction(() => {
      webhookReads(this.db).deleteDeliveries.run({ webhookId: id });
      deleteById(this.db, webhooks, id);
      this.audit(ctx, 'webhook.delete', row);
    })();
    return { success: true };
  }

  deliveries(ctx: RequestContext, id: string, query: z.infer<typeof DeliveryListQuerySchema>): Paged<DeliveryRow> {
    this.find(ctx, id);
    const { rows, total } = deliveryPageOf(this.db, shapeOf({ s: query.status }), { webhookId: id, status: query.status }, query);
    return paged(rows, query, total);
  }

  /** 02 §3: a failed delivery becomes a new pending delivery with attempt 0 (and a new event id, 05-wire-notes). */
  retry(ctx: RequestContext, id: string, deliveryId: string) {
    const hook = this.find(ctx, id);
    const old = webhookReads(this.db).delivery.get({ id: deliveryId, webhookId: id });
    if (!old) throw notFound('Delivery not found');
    if (old.status !== 'failed') throw badRequest('Only failed deliveries can be retried');
    const payload = old.payload as { timestamp?: unknown; data?: unknown };
    return this.db.$client.transaction(() => {
      const row = createDelivery(this.db, hook, {
        id: randomUUID(),
        type: old.event,
        timestamp: typeof payload.timestamp === 'string' ? payload.timestamp : new Date().toISOString(),
        data: payload.data ?? {},
      });
      this.audit(ctx, 'webhook.delivery_retry', hook, { deliveryId: old.id, newDeliveryId: row.id });
      return { message: 'Delivery retry queued', delivery: { id: row.id, status: row.status, attempt: row.attempt } };
    })();
  }

  test(ctx: RequestContext, id: string, body: z.infer<typeof WebhookTestSchema>) {
    const hook = this.find(ctx, id);
    const timestamp = new Date().toISOString();
    const row = this.db.$client.transaction(() =>
      createDelivery(this.db, hook, {
        id: randomUUID(),
        type: body.event ?? TEST_EVENT,
        timestamp,
        data: body.payload ?? { message: 'Test webhook from Svc', timestamp, webhookId: hook.id },
      }),
    )();
    return { message: 'Test delivery queued', delivery: { id: row.id, webhookId: row.webhookId, status: row.status, event: row.event, attempt: row.attempt } };
  }
}
