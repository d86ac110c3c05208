import { and, desc, getTableColumns, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import {
  API_KEY_WARNING,
  type ApiKeyCreateSchema,
  type ApiKeyListQuerySchema,
  type ApiKeyStatus,
  type ApiKeyUpdateSchema,
  type ApiKeyWithSecret,
} from '../../../contract/api-keys.js';
import type { Db } from '../../db/connection.js';
import { inJson, insertRow, preparedShapes, rowById, shapeOf, updateRow } from '../../db/prepared.js';
import { apiKeys } from '../../db/schema/index.js';
import { grants, systemContext, type RequestContext } from '../../context.js';
import { badRequest, fieldError, forbidden, notFound, siteAccessDenied } from '../../errors.js';
import { paged, preparedSelectPage, readPage, type Paged } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { visibleOr404 } from '../shared/visible.js';
import { inLiveOrgs, readOrgIds, requireOrg } from '../tenancy/access.js';
import { newApiKeyMaterial } from './material.js';
import type { ApiKeyUsage } from './usage.js';

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** The create and rotate answer (01 §2.1): the key's fields, not its hash, the full key shown this once, and the
 * warning. Field by field (docs/api-notes.md, "Output objects"): `{ ...row, key }` costs ~1 µs a field it adds. */
function withSecret(row: ApiKeyRow, key: string): ApiKeyWithSecret {
  return {
    id: row.id,
    orgId: row.orgId,
    name: row.name,
    keyPrefix: row.keyPrefix,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    rateLimit: row.rateLimit,
    status: row.status,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    lastUsedAt: row.lastUsedAt,
    usageCount: row.usageCount,
    key,
    warning: API_KEY_WARNING,
  };
}

const SYSTEM = systemContext().caller;

function isoNow(): string {
  return new Date().toISOString();
}

/** A key past its expiresAt is expired even before an authentication attempt has recorded it (01 §3). */
function effectiveStatus(row: Pick<ApiKeyRow, 'status' | 'expiresAt'>, now = isoNow()): ApiKeyStatus {
  return row.status === 'active' && row.expiresAt !== null && row.expiresAt <= now ? 'expired' : row.status;
}

function present<R extends Pick<ApiKeyRow, 'status' | 'expiresAt'>>(row: R): R {
  return { ...row, status: effectiveStatus(row) };
}

/** The list's status filter by effective status (null: any): an active key past its expiry lists as expired. */
function byEffectiveStatus(status: Placeholder, now: Placeholder): SQL {
  const pastExpiry = sql`(${apiKeys.status} = 'active' AND ${apiKeys.expiresAt} <= ${now})`;
  return sql`(${status} IS NULL
    OR (${status} = 'revoked' AND ${apiKeys.status} = 'revoked')
    OR (${status} = 'expired' AND (${apiKeys.status} = 'expired' OR ${pastExpiry}))
    OR (${status} = 'active' AND ${apiKeys.status} = 'active' AND (${apiKeys.expiresAt} IS NULL OR ${apiKeys.expiresAt} > ${now})))`;
}

/** The key list's page and count, per shape (db/prepared.ts): `l` the keys of every live organization (a system
 * caller's reach), else those of the organizations of the JSON array `orgIds`; by effective `status` (null: any) at
 * `now`. keyHash is not even read: the list cannot leak it. */
const keyPageOf = preparedShapes((db, shape) => {
  const { keyHash: _hash, ...listed } = getTableColumns(apiKeys);
  const where = and(
    shape.includes('l') ? inLiveOrgs(apiKeys.orgId) : inJson(apiKeys.orgId, 'orgIds'),
    byEffectiveStatus(sql.placeholder('status'), sql.placeholder('now')),
  );
  return preparedSelectPage(db, apiKeys, db.select(listed).from(apiKeys).$dynamic(), where, [desc(apiKeys.createdAt), sql`rowid DESC`]);
});

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/**
 * API keys (01 §2.1, §3, §4.1). Management is limited to the caller's organizations: keys of organizations out
 * of reach answer 404, naming such an organization answers 403. Authentication by key is authenticator.ts.
 */
export class ApiKeysService {
  constructor(
    private readonly db: Db,
    /** Rotation drops the uses of the old key not yet written. */
    private readonly usage: Pick<ApiKeyUsage, 'discard'>,
  ) {}

  // ---- Management (01 §4.1) ----

  list(ctx: RequestContext, query: z.infer<typeof ApiKeyListQuerySchema>): Paged<Omit<ApiKeyRow, 'keyHash'>> {
    // null: every live organization (a system caller without orgId, shape `l`).
    const orgIds = readOrgIds(this.db, ctx.caller, query.orgId);
    if (orgIds?.length === 0) return paged([], query, 0);
    const values = { orgIds: orgIds && JSON.stringify(orgIds), status: query.status ?? null, now: isoNow() };
    const { rows, total } = readPage(keyPageOf(this.db, shapeOf({ l: orgIds === null })), values, query);
    return paged(rows.map(present), query, total);
  }

  get(ctx: RequestContext, id: string): ApiKeyRow {
    return present(this.findVisible(ctx, id));
  }

  create(ctx: RequestContext, body: z.infer<typeof ApiKeyCreateSchema>): ApiKeyWithSecret {
    this.assertOrgWide(ctx);
    const scopes = unique(body.scopes ?? []);
    this.assertGrantable(ctx, scopes);
    const expiresAt = body.expiresAt ? new Date(body.expiresAt).toISOString() : null;
    if (expiresAt !== null && expiresAt <= isoNow()) throw fieldError('expiresAt', 'must be in the future');
    return this.db.$client.transaction(() => {
      const org = requireOrg(this.db, ctx.caller, body.orgId);
      const material = newApiKeyMaterial();
      const row = insertRow(this.db, apiKeys, {
        orgId: org.id,
        name: body.name,
        keyPrefix: material.keyPrefix,
        keyHash: material.keyHash,
        scopes,
        expiresAt,
        rateLimit: body.rateLimit ?? 1000,
        createdBy: ctx.caller.userId,
      });
      recordAudit(this.db, ctx, {
        action: 'api_key.create',
        resourceType: 'api_key',
        resourceId: row.id,
        resourceName: row.name,
        orgId: org.id,
        partnerId: org.partnerId,
        details: { keyPrefix: row.keyPrefix, scopes, rateLimit: row.rateLimit, expiresAt },
      });
      return withSecret(row, material.key);
    })();
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof ApiKeyUpdateSchema>): ApiKeyRow {
    const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as z.infer<typeof ApiKeyUpdateSchema>;
    if (Object.keys(changes).length === 0) throw badRequest('No updates provided', 'NO_UPDATES');
    if (changes.scopes) changes.scopes = unique(changes.scopes);
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      this.assertOrgWide(ctx);
      const status = effectiveStatus(current);
      if (status !== 'active') throw badRequest(`Cannot update ${status} API key`, 'API_KEY_NOT_ACTIVE');
      if (changes.scopes) this.assertGrantable(ctx, changes.scopes);
      const updated = updateRow(this.db, apiKeys, current, { ...changes, updatedAt: isoNow() });
      if (!updated) throw notFound('API key not found');
      recordAudit(this.db, ctx, {
        action: 'api_key.update',
        resourceType: 'api_key',
        resourceId: id,
        resourceName: updated.name,
        orgId: updated.orgId,
        partnerId: this.partnerOf(updated.orgId),
        details: { changes: Object.keys(changes), ...changes },
      });
      return present(updated);
    })();
  }

  revoke(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      this.assertOrgWide(ctx);
      if (current.status === 'revoked') throw badRequest('API key is already revoked', 'API_KEY_ALREADY_REVOKED');
      const updated = updateRow(this.db, apiKeys, current, { status: 'revoked', updatedAt: isoNow() });
      if (!updated) throw notFound('API key not found');
      recordAudit(this.db, ctx, {
        action: 'api_key.revoke',
        resourceType: 'api_key',
        resourceId: id,
        resourceName: updated.name,
        orgId: updated.orgId,
        partnerId: this.partnerOf(updated.orgId),
        details: { keyPrefix: updated.keyPrefix, previousStatus: effectiveStatus(current) },
      });
      return {
        success: true as const,
        message: 'API key revoked',
        apiKey: { id: updated.id, name: updated.name, keyPrefix: updated.keyPrefix, status: updated.status, updatedAt: updated.updatedAt },
      };
    })();
  }

  rotate(ctx: RequestContext, id: string): ApiKeyWithSecret {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      this.assertOrgWide(ctx);
      const status = effectiveStatus(current);
      if (status !== 'active') throw badRequest(`Cannot rotate ${status} API key`, 'API_KEY_NOT_ACTIVE');
      const material = newApiKeyMaterial();
      const updated = updateRow(this.db, apiKeys, current, {
        keyPrefix: material.keyPrefix,
        keyHash: material.keyHash,
        usageCount: 0,
        lastUsedAt: null,
        updatedAt: isoNow(),
      });
      if (!updated) throw notFound('API key not found');
      // Uses of the old key not yet written belong to the statistics that rotation resets.
      this.usage.discard(id);
      recordAudit(this.db, ctx, {
        action: 'api_key.rotate',
        resourceType: 'api_key',
        resourceId: id,
        resourceName: updated.name,
        orgId: updated.orgId,
        partnerId: this.partnerOf(updated.orgId),
        details: { previousKeyPrefix: current.keyPrefix, keyPrefix: updated.keyPrefix },
      });
      return withSecret(updated, material.key);
    })();
  }

  /** A key the caller may see: absent, in a deleted organization or out of reach all answer 404. */
  private findVisible(ctx: RequestContext, id: string): ApiKeyRow {
    const row = rowById(this.db, apiKeys, id);
    return visibleOr404(row, (r) => requireOrg(this.db, ctx.caller, r.orgId), () => notFound('API key not found'));
  }

  /** Keys act for the whole organization: a user restricted to some sites may not manage them. */
  private assertOrgWide(ctx: RequestContext): void {
    if (ctx.caller.siteIds !== null) throw siteAccessDenied();
  }

  /** A key cannot carry more than its creator holds. */
  private assertGrantable(ctx: RequestContext, scopes: readonly string[]): void {
    const missing = scopes.filter((scope) => !grants(ctx.caller.permissions, scope));
    if (missing.length > 0) {
      throw forbidden(`Cannot grant scopes you do not hold: ${missing.join(', ')}`, 'SCOPE_NOT_HELD');
    }
  }

  private partnerOf(orgId: string): string | null {
    try {
      return requireOrg(this.db, SYSTEM, orgId).partnerId;
    } catch {
      return null;
    }
  }
}
