import { and, desc, eq, gt, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  EnrollmentKeyCreateSchema,
  EnrollmentKeyListQuerySchema,
  EnrollmentKeyRotateSchema,
  EnrollmentKeyWithSecretSchema,
} from '../../../contract/enrollment-keys.js';
import type { Db } from '../../db/connection.js';
import { inJson, insertRow, preparedQueries, updateRow, rowById, shapeConditions, shapeOf } from '../../db/prepared.js';
import { enrollmentKeys } from '../../db/schema/index.js';
import { systemContext, type RequestContext } from '../../context.js';
import { DomainError, fieldError, notFound, siteAccessDenied, unauthorized } from '../../errors.js';
import { paged, preparedPages, type Paged } from '../../lib/paging.js';
import { secureRandomBytes, sha256Hex } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import { deleteAudited } from '../shared/audited.js';
import { visibleOr404 } from '../shared/visible.js';
import { accessibleOrgIds, canAccessSite, inLiveOrgs, requireOrg, requireSite } from '../tenancy/access.js';

export type EnrollmentKeyRow = typeof enrollmentKeys.$inferSelect;
export type EnrollmentKeyWithSecret = z.infer<typeof EnrollmentKeyWithSecretSchema>;

/** The create and rotate answer (01 §2.2): the key's fields, not its hash, and the raw key shown this once.
 * Field by field (docs/api-notes.md, "Output objects"): `{ ...row, key }` costs ~1 µs a field it adds. */
function withSecret(row: EnrollmentKeyRow, key: string): EnrollmentKeyWithSecret {
  return {
    id: row.id,
    orgId: row.orgId,
    siteId: row.siteId,
    name: row.name,
    usageCount: row.usageCount,
    maxUsage: row.maxUsage,
    expiresAt: row.expiresAt,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    key,
  };
}

/** Why an enrollment key was refused (04 wire notes: the `reason` of the 401). */
export type EnrollmentRefusal = 'enrollment_key_not_found' | 'enrollment_key_expired' | 'enrollment_key_exhausted';

/** The key lookups of enrollment and of every read of one key, and the taking of one use: prepared once per
 * database (db/prepared.ts). The conditional UPDATE re-checks expiry and maxUsage. */
const keyQueries = preparedQueries((db) => ({
  byHash: db.select().from(enrollmentKeys).where(eq(enrollmentKeys.keyHash, sql.placeholder('keyHash'))).prepare(),
  takeUse: db
    .update(enrollmentKeys)
    .set({ usageCount: sql`${enrollmentKeys.usageCount} + 1` })
    .where(
      and(
        eq(enrollmentKeys.id, sql.placeholder('id')),
        gt(enrollmentKeys.expiresAt, sql.placeholder('now')),
        or(isNull(enrollmentKeys.maxUsage), lt(enrollmentKeys.usageCount, enrollmentKeys.maxUsage)),
      ),
    )
    .prepare(),
}));

/** The key list's page and count, per shape (db/prepared.ts): `o` one organization (`orgId`), `l` every live
 * organization (a system caller's reach), else `i` those of the JSON array `orgIds`; `s` one site (`siteId`); `r`
 * within the caller's sites (`siteIds`); `e` expired or `f` not expired at `now`. */
const keyPageOf = preparedPages(enrollmentKeys, [desc(enrollmentKeys.createdAt), sql`rowid DESC`], (shape) =>
  and(
    shape.includes('o')
      ? eq(enrollmentKeys.orgId, sql.placeholder('orgId'))
      : shape.includes('l')
        ? inLiveOrgs(enrollmentKeys.orgId)
        : inJson(enrollmentKeys.orgId, 'orgIds'),
    ...shapeConditions(shape, {
      s: () => eq(enrollmentKeys.siteId, sql.placeholder('siteId')),
      r: () => inJson(enrollmentKeys.siteId, 'siteIds'),
      e: () => lte(enrollmentKeys.expiresAt, sql.placeholder('now')),
      f: () => gt(enrollmentKeys.expiresAt, sql.placeholder('now')),
    }),
  ),
);

const REFUSALS: Record<EnrollmentRefusal, string> = {
  enrollment_key_not_found: 'Enrollment key not recognized',
  enrollment_key_expired: 'Enrollment key has expired',
  enrollment_key_exhausted: 'Enrollment key has reached its maximum usage',
};

export function enrollmentRefused(reason: EnrollmentRefusal): DomainError {
  return unauthorized(REFUSALS[reason], reason.toUpperCase(), { reason });
}

const SYSTEM = systemContext().caller;

function isoNow(): string {
  return new Date().toISOString();
}

/** 01 §2.2: 64 hex characters from 32 random bytes. */
function newRawKey(): string {
  return secureRandomBytes(32).toString('hex');
}

/**
 * Enrollment keys (01 §2.2, §3, §4.2): stored as SHA-256 of `<pepper>:<key>`, limited to the caller's
 * organizations (and, for site-restricted users, to keys pinned to their sites), and consumed by agent
 * enrollment through `claim`, which re-checks expiry and usage in the enrolling transaction.
 */
export class EnrollmentKeysService {
  constructor(
    private readonly db: Db,
    private readonly pepper: string,
    private readonly defaultTtlMinutes: number,
  ) {}

  private hash(raw: string): string {
    return sha256Hex(`${this.pepper}:${raw}`);
  }

  /** The expiry a create or rotate asks for: expiresAt (in the future), ttlMinutes from now, or the fallback. */
  private expiryOf(body: { expiresAt?: string | undefined; ttlMinutes?: number | undefined }, fallback: () => string): string {
    if (body.expiresAt !== undefined) {
      const at = new Date(body.expiresAt).toISOString();
      if (at <= isoNow()) throw fieldError('expiresAt', 'must be in the future');
      return at;
    }
    if (body.ttlMinutes !== undefined) return new Date(Date.now() + body.ttlMinutes * 60_000).toISOString();
    return fallback();
  }

  list(ctx: RequestContext, query: z.infer<typeof EnrollmentKeyListQuerySchema>): Paged<EnrollmentKeyRow> {
    const { caller } = ctx;
    // Without orgId, the organizations the caller reaches; null: every live one (a system caller, shape `l`).
    let orgIds: readonly string[] | null = null;
    if (query.orgId) requireOrg(this.db, caller, query.orgId);
    else {
      orgIds = accessibleOrgIds(this.db, caller);
      if (orgIds?.length === 0) return paged([], query, 0);
    }
    if (query.siteId) requireSite(this.db, caller, query.siteId);
    if (caller.siteIds !== null && caller.siteIds.length === 0) return paged([], query, 0);
    const shape = shapeOf({
      o: query.orgId,
      i: orgIds !== null,
      l: !query.orgId && orgIds === null,
      s: query.siteId,
      r: caller.siteIds !== null,
      e: query.expired === true,
      f: query.expired === false,
    });
    const values = {
      orgId: query.orgId,
      orgIds: orgIds && JSON.stringify(orgIds),
      siteId: query.siteId,
      siteIds: caller.siteIds && JSON.stringify(caller.siteIds),
      now: query.expired === undefined ? undefined : isoNow(),
    };
    const { rows, total } = keyPageOf(this.db, shape, values, query);
    return paged(rows, query, total);
  }

  get(ctx: RequestContext, id: string): EnrollmentKeyRow {
    return this.findVisible(ctx, id);
  }

  create(ctx: RequestContext, body: z.infer<typeof EnrollmentKeyCreateSchema>): EnrollmentKeyWithSecret {
    const { caller } = ctx;
    // 01 §4.2: inferred for organization callers; required for partner and system callers.
    const orgId = body.orgId ?? (caller.scope === 'organization' ? caller.orgId : null);
    if (!orgId) throw fieldError('orgId', 'Required for partner and system callers');
    const expiresAt = this.expiryOf(body, () => new Date(Date.now() + this.defaultTtlMinutes * 60_000).toISOString());
    return this.db.$client.transaction(() => {
      const org = requireOrg(this.db, caller, orgId);
      const siteId = body.siteId ?? null;
      if (siteId === null) {
        // An organization-wide key would enroll into sites a site-restricted user cannot reach.
        if (caller.siteIds !== null) throw siteAccessDenied();
      } else {
        this.assertSiteOfOrg(siteId, org.id);
        if (!canAccessSite(caller, siteId)) throw siteAccessDenied();
      }
      const raw = newRawKey();
      const row = insertRow(this.db, enrollmentKeys, {
        orgId: org.id,
        siteId,
        name: body.name,
        keyHash: this.hash(raw),
        maxUsage: body.maxUsage ?? 1,
        expiresAt,
        createdBy: caller.userId,
      });
      recordAudit(this.db, ctx, {
        action: 'enrollment_key.create',
        resourceType: 'enrollment_key',
        resourceId: row.id,
        resourceName: row.name,
        orgId: org.id,
        partnerId: org.partnerId,
        details: { siteId, maxUsage: row.maxUsage, expiresAt },
      });
      return withSecret(row, raw);
    })();
  }

  /** A siteId outside the organization is a bad request (04 wire notes), whether or not the site exists. */
  private assertSiteOfOrg(siteId: string, orgId: string): void {
    let siteOrg: string | null = null;
    try {
      siteOrg = requireSite(this.db, SYSTEM, siteId).orgId;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
    }
    if (siteOrg !== orgId) throw fieldError('siteId', 'Site does not belong to the organization');
  }

  rotate(ctx: RequestContext, id: string, body: z.infer<typeof EnrollmentKeyRotateSchema>): EnrollmentKeyWithSecret {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      const expiresAt = this.expiryOf(body, () => current.expiresAt);
      const maxUsage = body.maxUsage !== undefined ? body.maxUsage : current.maxUsage;
      const raw = newRawKey();
      const updated = updateRow(this.db, enrollmentKeys, current, {
        keyHash: this.hash(raw),
        usageCount: 0,
        maxUsage,
        expiresAt,
        updatedAt: isoNow(),
      });
      if (!updated) throw notFound('Enrollment key not found');
      recordAudit(this.db, ctx, {
        action: 'enrollment_key.rotate',
        resourceType: 'enrollment_key',
        resourceId: id,
        resourceName: updated.name,
        orgId: updated.orgId,
        partnerId: this.partnerOf(updated.orgId),
        details: { maxUsage, expiresAt, previousUsageCount: current.usageCount },
      });
      return withSecret(updated, raw);
    })();
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      deleteAudited(this.db, ctx, enrollmentKeys, current, {
        action: 'enrollment_key.delete',
        resourceType: 'enrollment_key',
        partnerId: this.partnerOf(current.orgId),
        details: { siteId: current.siteId, usageCount: current.usageCount },
      });
      return { success: true as const };
    })();
  }

  /**
   * Takes one use of a raw key for an enrollment; run inside the enrolling transaction so a failure after it
   * gives the use back. The conditional UPDATE re-checks expiry and maxUsage, so concurrent enrollments can
   * never exceed maxUsage. Throws the 401 of 04 wire notes with its `reason`.
   */
  claim(raw: string): EnrollmentKeyRow {
    const row = keyQueries(this.db).byHash.get({ keyHash: this.hash(raw) });
    if (!row) throw enrollmentRefused('enrollment_key_not_found');
    try {
      requireOrg(this.db, SYSTEM, row.orgId);
    } catch (err) {
      if (err instanceof DomainError) throw enrollmentRefused('enrollment_key_not_found');
      throw err;
    }
    const now = isoNow();
    const refusal = (key: EnrollmentKeyRow): EnrollmentRefusal | null => {
      if (key.expiresAt <= now) return 'enrollment_key_expired';
      if (key.maxUsage !== null && key.usageCount >= key.maxUsage) return 'enrollment_key_exhausted';
      return null;
    };
    const early = refusal(row);
    if (early) throw enrollmentRefused(early);
    const taken = keyQueries(this.db).takeUse.run({ id: row.id, now });
    if (taken.changes !== 1) {
      const again = rowById(this.db, enrollmentKeys, row.id);
      throw enrollmentRefused(again ? (refusal(again) ?? 'enrollment_key_exhausted') : 'enrollment_key_not_found');
    }
    return { ...row, usageCount: row.usageCount + 1 };
  }

  /** A key the caller may see: absent, out of reach, or (for site-restricted users) not pinned to one of
   * their sites all answer 404. */
  private findVisible(ctx: RequestContext, id: string): EnrollmentKeyRow {
    const row = visibleOr404(
      rowById(this.db, enrollmentKeys, id),
      (r) => requireOrg(this.db, ctx.caller, r.orgId),
      () => notFound('Enrollment key not found'),
    );
    if (ctx.caller.siteIds !== null && (row.siteId === null || !canAccessSite(ctx.caller, row.siteId))) {
      throw notFound('Enrollment key not found');
    }
    return row;
  }

  private partnerOf(orgId: string): string | null {
    try {
      return requireOrg(this.db, SYSTEM, orgId).partnerId;
    } catch {
      return null;
    }
  }
}
