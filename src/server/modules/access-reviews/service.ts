import { and, asc, eq, isNull, ne, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { AccessReviewCreateSchema, AccessReviewItemUpdateSchema } from '../../../contract/access-reviews.js';
import type { Db } from '../../db/connection.js';
import { insertRow, preparedQueries, rowQuery, updateRow } from '../../db/prepared.js';
import { accessReviewItems, accessReviews, roles, users } from '../../db/schema/index.js';
import type { Caller, RequestContext } from '../../context.js';
import { badRequest, forbidden, notFound } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';
import { effectivePermissions, roleNames as roleNamesOf } from '../identity/caller-resolver.js';
import type { Directory, LinkFilter } from '../identity/directory.js';
import type { SessionService } from '../identity/sessions.js';
import type { UsersService } from '../users/service.js';

type ReviewRow = typeof accessReviews.$inferSelect;

/** A partner's reviews ('partner': partnerId, no organization) or an organization's ('organization': orgId). */
function scopeWhere(kind: 'partner' | 'organization') {
  return kind === 'partner'
    ? and(eq(accessReviews.partnerId, sql.placeholder('partnerId')), isNull(accessReviews.orgId))
    : eq(accessReviews.orgId, sql.placeholder('orgId'));
}

/** The read paths, prepared once per database (db/prepared.ts): one review and the list, per kind of scope. */
const queriesOf = preparedQueries((db) => {
  const listOrder = [asc(accessReviews.createdAt), asc(accessReviews.id)];
  return {
    review: {
      partner: rowQuery(db, accessReviews, and(eq(accessReviews.id, sql.placeholder('id')), scopeWhere('partner'))),
      organization: rowQuery(db, accessReviews, and(eq(accessReviews.id, sql.placeholder('id')), scopeWhere('organization'))),
    },
    list: {
      partner: rowQuery(db, accessReviews, scopeWhere('partner'), { orderBy: listOrder }),
      organization: rowQuery(db, accessReviews, scopeWhere('organization'), { orderBy: listOrder }),
    },
    // The report's items with the columns it shows of their users (not whole rows) and the live role names.
    items: db
      .select({
        id: accessReviewItems.id,
        roleId: accessReviewItems.roleId,
        roleName: accessReviewItems.roleName,
        decision: accessReviewItems.decision,
        notes: accessReviewItems.notes,
        reviewedAt: accessReviewItems.reviewedAt,
        reviewedBy: accessReviewItems.reviewedBy,
        userId: users.id,
        userName: users.name,
        userEmail: users.email,
        lastActiveAt: users.lastLoginAt,
        liveRoleName: roles.name,
      })
      .from(accessReviewItems)
      .innerJoin(users, eq(users.id, accessReviewItems.userId))
      .leftJoin(roles, eq(roles.id, accessReviewItems.roleId))
      .where(eq(accessReviewItems.reviewId, sql.placeholder('reviewId')))
      .orderBy(asc(users.email), asc(accessReviewItems.id))
      .prepare(),
    // The write paths: one item of a review, whether any item is still pending, the users of the revoked ones, and
    // the completion (of a review not already completed).
    item: rowQuery(db, accessReviewItems, and(eq(accessReviewItems.id, sql.placeholder('id')), eq(accessReviewItems.reviewId, sql.placeholder('reviewId')))),
    pendingItem: db
      .select({ id: accessReviewItems.id })
      .from(accessReviewItems)
      .where(and(eq(accessReviewItems.reviewId, sql.placeholder('reviewId')), eq(accessReviewItems.decision, 'pending')))
      .prepare(),
    revokedUsers: db
      .select({ userId: accessReviewItems.userId })
      .from(accessReviewItems)
      .where(and(eq(accessReviewItems.reviewId, sql.placeholder('reviewId')), eq(accessReviewItems.decision, 'revoked')))
      .prepare(),
    complete: db
      .update(accessReviews)
      .set({ status: 'completed', completedAt: sql`${sql.placeholder('completedAt')}`, updatedAt: sql`${sql.placeholder('completedAt')}` })
      .where(and(eq(accessReviews.id, sql.placeholder('id')), ne(accessReviews.status, 'completed')))
      .prepare(),
  };
});

/** The placeholders' values of scopeWhere for a scope. */
function scopeValues(scope: ReviewScope) {
  return scope.kind === 'partner' ? { partnerId: scope.partnerId } : { orgId: scope.orgId };
}

/** The tenant a review belongs to: the caller's partner (partner-user links) or organization. */
type ReviewScope = { kind: 'partner'; partnerId: string } | { kind: 'organization'; orgId: string; partnerId: string | null };

/**
 * Access reviews (01 §2.10, §3, §4.8): a snapshot of the user-role mappings of the caller's partner or
 * organization, one item each, decided approved or revoked; completing removes the revoked users from the
 * scope in one transaction. A completed review is immutable.
 */
export class AccessReviewsService {
  constructor(
    private readonly db: Db,
    private readonly directory: Directory,
    private readonly sessions: SessionService,
    private readonly users: UsersService,
  ) {}

  /** 01 §7: 403 without a partner or organization context, and for partner users who do not reach every
   * organization of the partner. */
  private scopeOf(ctx: RequestContext): ReviewScope {
    const { caller } = ctx;
    if (caller.scope === 'partner' && caller.partnerId) {
      if (caller.orgAccess !== 'all') {
        throw forbidden("Access reviews need access to all of the partner's organizations", 'ORG_ACCESS_ALL_REQUIRED');
      }
      return { kind: 'partner', partnerId: caller.partnerId };
    }
    if (caller.scope === 'organization' && caller.orgId) return { kind: 'organization', orgId: caller.orgId, partnerId: caller.partnerId };
    throw forbidden('Access reviews need a partner or organization context', 'TENANT_CONTEXT_REQUIRED');
  }

  private links(scope: ReviewScope): LinkFilter {
    return scope.kind === 'partner' ? { partnerIds: [scope.partnerId], orgIds: [] } : { partnerIds: [], orgIds: [scope.orgId] };
  }

  private auditScope(scope: ReviewScope) {
    return scope.kind === 'partner' ? { partnerId: scope.partnerId, orgId: null } : { partnerId: scope.partnerId, orgId: scope.orgId };
  }

  private requireReview(scope: ReviewScope, id: string): ReviewRow {
    const review = queriesOf(this.db).review[scope.kind].get({ id, ...scopeValues(scope) });
    if (!review) throw notFound('Access review not found');
    return review;
  }

  /**
   * A revoked item is a removal decided now and done at completion, so it is refused as DELETE /users/:id would
   * refuse it (docs/api-notes.md "Users and invitations"): not the caller itself, nor a user the caller may not
   * manage (403). Checked when an item is revoked and again, for the completing caller, at completion. A user
   * whose link has already left the scope loses nothing at completion and is not checked.
   */
  private assertRevocable(caller: Caller, scope: ReviewScope, userId: string): void {
    const membership = this.directory.membershipOf(userId);
    if (!membership || !this.directory.covers(this.links(scope), membership)) return;
    this.users.assertRemovable(caller, this.users.requireMember(caller, userId));
  }

  private reviewerNames(ids: (string | null)[]): Map<string, string> {
    return this.directory.namesOf(ids);
  }

  private view(review: ReviewRow, reviewerName: string | null) {
    return {
      id: review.id,
      name: review.name,
      description: review.description,
      status: review.status,
      reviewerId: review.reviewerId,
      reviewerName,
      dueDate: review.dueDate,
      partnerId: review.partnerId,
      orgId: review.orgId,
      createdAt: review.createdAt,
      updatedAt: review.updatedAt,
      completedAt: review.completedAt,
    };
  }

  list(ctx: RequestContext) {
    const scope = this.scopeOf(ctx);
    const rows = queriesOf(this.db).list[scope.kind].all(scopeValues(scope));
    const names = this.reviewerNames(rows.map((r) => r.reviewerId));
    return { data: rows.map((r) => this.view(r, r.reviewerId ? (names.get(r.reviewerId) ?? null) : null)) };
  }

  create(ctx: RequestContext, body: z.infer<typeof AccessReviewCreateSchema>) {
    const scope = this.scopeOf(ctx);
    const links = this.links(scope);
    // docs/api-notes.md "Roles and permissions": the reviewer defaults to the calling user, and to none for a key.
    const reviewerId = body.reviewerId ?? (ctx.caller.kind === 'user' ? ctx.caller.userId : null);
    return this.db.$client.transaction(() => {
      if (body.reviewerId !== undefined) {
        const membership = this.directory.membershipOf(body.reviewerId);
        if (!membership || !this.directory.covers(links, membership)) {
          throw badRequest('The reviewer must be a user of the same partner or organization', 'REVIEWER_NOT_IN_SCOPE');
        }
      }
      const members = this.directory.members(links);
      const roleNames = roleNamesOf(this.db, [...new Set(members.flatMap((m) => (m.membership ? [m.membership.roleId] : [])))]);
      const review = insertRow(this.db, accessReviews, {
        partnerId: scope.kind === 'partner' ? scope.partnerId : null,
        orgId: scope.kind === 'organization' ? scope.orgId : null,
        name: body.name,
        description: body.description ?? null,
        dueDate: body.dueDate ?? null,
        reviewerId,
        createdBy: ctx.caller.userId,
      });
      const items = members.flatMap(({ user, membership }) =>
        membership ? [{ reviewId: review.id, userId: user.id, roleId: membership.roleId, roleName: roleNames.get(membership.roleId) ?? '' }] : [],
      );
      // One prepared insert per item (in this transaction), where one multi-row insert's SQL varied with the count.
      for (const item of items) insertRow(this.db, accessReviewItems, item);
      recordAudit(this.db, ctx, {
        action: 'access_review.create',
        resourceType: 'access_review',
        resourceId: review.id,
        resourceName: review.name,
        ...this.auditScope(scope),
        details: { itemCount: items.length },
      });
      return { id: review.id, name: review.name, status: review.status, itemCount: items.length };
    })();
  }

  get(ctx: RequestContext, id: string) {
    const scope = this.scopeOf(ctx);
    const review = this.requireReview(scope, id);
    // A deliberate read join: the review's report lists its items by the users' e-mail with their live role names.
    const rows = queriesOf(this.db).items.all({ reviewId: review.id });
    const permissions = new Map<string, string[]>();
    const permissionsOf = (roleId: string, exists: boolean) => {
      let list = permissions.get(roleId);
      if (!list) {
        list = exists ? effectivePermissions(this.db, roleId) : [];
        permissions.set(roleId, list);
      }
      return list;
    };
    const names = this.reviewerNames([review.reviewerId]);
    return {
      ...this.view(review, review.reviewerId ? (names.get(review.reviewerId) ?? null) : null),
      items: rows.map((item) => ({
        id: item.id,
        userId: item.userId,
        userName: item.userName,
        userEmail: item.userEmail,
        lastActiveAt: item.lastActiveAt,
        roleId: item.roleId,
        roleName: item.liveRoleName ?? item.roleName,
        decision: item.decision,
        notes: item.notes,
        reviewedAt: item.reviewedAt,
        reviewedBy: item.reviewedBy,
        permissions: permissionsOf(item.roleId, item.liveRoleName !== null),
      })),
    };
  }

  updateItem(ctx: RequestContext, id: string, itemId: string, body: z.infer<typeof AccessReviewItemUpdateSchema>) {
    const scope = this.scopeOf(ctx);
    return this.db.$client.transaction(() => {
      const review = this.requireReview(scope, id);
      const item = queriesOf(this.db).item.get({ id: itemId, reviewId: review.id });
      if (!item) throw notFound('Access review item not found');
      if (review.status === 'completed') throw badRequest('Cannot modify completed review', 'REVIEW_COMPLETED');
      if (body.decision === 'revoked') this.assertRevocable(ctx.caller, scope, item.userId);
      const now = new Date().toISOString();
      const decided = body.decision !== 'pending';
      const updated = updateRow(this.db, accessReviewItems, item, {
        decision: body.decision,
        ...(body.notes !== undefined ? { notes: body.notes } : {}),
        reviewedAt: decided ? now : null,
        reviewedBy: decided ? ctx.caller.userId : null,
      });
      if (!updated) throw notFound('Access review item not found');
      // 01 §3: the first decision recorded moves the review from pending to in_progress.
      updateRow(this.db, accessReviews, review, {
        updatedAt: now,
        ...(review.status === 'pending' && decided ? { status: 'in_progress' as const } : {}),
      });
      recordAudit(this.db, ctx, {
        action: 'access_review.item.update',
        resourceType: 'access_review_item',
        resourceId: item.id,
        resourceName: review.name,
        ...this.auditScope(scope),
        details: { reviewId: review.id, decision: body.decision, userId: item.userId },
      });
      return { id: updated.id, decision: updated.decision, notes: updated.notes, reviewedAt: updated.reviewedAt };
    })();
  }

  complete(ctx: RequestContext, id: string) {
    const scope = this.scopeOf(ctx);
    return this.db.$client.transaction(() => {
      const review = this.requireReview(scope, id);
      if (review.status === 'completed') throw badRequest('Review is already completed', 'REVIEW_COMPLETED');
      const queries = queriesOf(this.db);
      const pending = queries.pendingItem.get({ reviewId: review.id });
      if (pending) throw badRequest('Cannot complete review with pending items', 'REVIEW_HAS_PENDING_ITEMS');
      const revoked = queries.revokedUsers.all({ reviewId: review.id });
      const revokedUserIds = [...new Set(revoked.map((r) => r.userId))];
      // The completing caller may not be the one who decided: every removal is checked for it before any is done.
      for (const userId of revokedUserIds) this.assertRevocable(ctx.caller, scope, userId);
      for (const userId of revokedUserIds) {
        // Only the link of this review's scope goes; the account stays (as with DELETE /users/:id).
        if (this.directory.removeLink(this.db, userId, scope)) this.sessions.revokeAllForUser(this.db, userId);
      }
      const completedAt = new Date().toISOString();
      queries.complete.run({ id: review.id, completedAt });
      recordAudit(this.db, ctx, {
        action: 'access_review.complete',
        resourceType: 'access_review',
        resourceId: review.id,
        resourceName: review.name,
        ...this.auditScope(scope),
        details: { revokedCount: revokedUserIds.length, revokedUserIds },
      });
      return { id: review.id, status: 'completed' as const, completedAt, revokedCount: revokedUserIds.length };
    })();
  }
}
