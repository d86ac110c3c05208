import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, id, ref, timestamps } from './columns.js';
import { users } from './identity.js';
import { organizations, partners } from './tenancy.js';

/** 01 §2.10 access review: of a partner's user links or of an organization's (exactly one of the two). */
export const accessReviews = sqliteTable(
  'access_reviews',
  {
    id: id(),
    partnerId: text().references(() => partners.id),
    orgId: text().references(() => organizations.id),
    name: text().notNull(),
    description: text(),
    status: text({ enum: ['pending', 'in_progress', 'completed'] }).notNull().default('pending'),
    reviewerId: text().references(() => users.id),
    dueDate: text(),
    createdBy: text(),
    ...timestamps(),
    completedAt: text(),
  },
  (t) => [index('access_reviews_partner_idx').on(t.partnerId, t.createdAt), index('access_reviews_org_idx').on(t.orgId, t.createdAt)],
);

/** 01 §2.10 access review item: one user-role mapping as it was when the review was created. The role is
 * kept by id and name only, so a role deleted later does not take the review's history with it. */
export const accessReviewItems = sqliteTable(
  'access_review_items',
  {
    id: id(),
    reviewId: ref(() => accessReviews.id, { onDelete: 'cascade' }),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    roleId: text().notNull(),
    roleName: text().notNull(),
    decision: text({ enum: ['pending', 'approved', 'revoked'] }).notNull().default('pending'),
    notes: text(),
    reviewedAt: text(),
    reviewedBy: text(),
    createdAt: createdAt(),
  },
  (t) => [index('access_review_items_review_idx').on(t.reviewId)],
);
