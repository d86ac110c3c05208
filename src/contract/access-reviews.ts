import { z } from 'zod';
import { getById } from './builders.js';
import { NameSchema, TimestampSchema, UuidSchema, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';

const IdParams = z.object({ id: UuidSchema.describe('Access review id') });
const ItemParams = z.object({
  id: UuidSchema.describe('Access review id'),
  itemId: UuidSchema.describe('Item id'),
});

export const AccessReviewStatusSchema = z.enum(['pending', 'in_progress', 'completed']);
export const AccessReviewDecisionSchema = z.enum(['pending', 'approved', 'revoked']);

/** 01 §2.10 and §4.8. */
export const AccessReviewSchema = z.object({
  id: UuidSchema,
  name: z.string(),
  description: z.string().nullable(),
  status: AccessReviewStatusSchema,
  reviewerId: UuidSchema.nullable(),
  reviewerName: z.string().nullable(),
  dueDate: z.string().nullable(),
  /** The review covers this partner's user links, or this organization's. */
  partnerId: UuidSchema.nullable(),
  orgId: UuidSchema.nullable(),
  ...timestampFields,
  completedAt: TimestampSchema.nullable(),
});

export const AccessReviewItemSchema = z.object({
  id: UuidSchema,
  userId: UuidSchema,
  userName: z.string(),
  userEmail: z.string(),
  /** The user's last sign-in. */
  lastActiveAt: TimestampSchema.nullable(),
  roleId: UuidSchema,
  roleName: z.string(),
  decision: AccessReviewDecisionSchema,
  notes: z.string().nullable(),
  reviewedAt: TimestampSchema.nullable(),
  reviewedBy: UuidSchema.nullable(),
  /** The role's effective permissions now, as `resource:action`. */
  permissions: z.array(z.string()),
});

export const AccessReviewDetailSchema = AccessReviewSchema.extend({ items: z.array(AccessReviewItemSchema) });

const DueDate = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

export const AccessReviewCreateSchema = z.strictObject({
  name: NameSchema.describe('Name of the review (1-255 characters)'),
  description: z.string().trim().max(2000).nullable().optional().describe('What the review is for'),
  dueDate: DueDate.nullable().optional().describe('When the review should be done (ISO 8601 date or date-time)'),
  reviewerId: UuidSchema.optional().describe('The reviewer, a user of the same partner or organization (default: you)'),
});

export const AccessReviewItemUpdateSchema = z.strictObject({
  decision: AccessReviewDecisionSchema.describe('approved, revoked (removed from scope on completion) or pending'),
  notes: z.string().trim().max(2000).nullable().optional().describe('Why'),
});

const READ = { permission: 'users:read' } as const;
/** 01 §4.8 names users:write and, unlike the "+ MFA" routes, no MFA. */
const WRITE = { permission: 'users:write' } as const;

/** 01 §4.8 access reviews of the caller's partner (partner-user links) or organization (organization-user links). */
export const accessReviews = {
  list: endpoint({
    method: 'GET',
    path: '/access-reviews',
    responses: { 200: z.object({ data: z.array(AccessReviewSchema) }) },
    auth: READ,
    summary: "List the access reviews of the caller's partner or organization, oldest first",
  }),
  create: endpoint({
    method: 'POST',
    path: '/access-reviews',
    body: AccessReviewCreateSchema,
    responses: {
      201: z.object({ id: UuidSchema, name: z.string(), status: AccessReviewStatusSchema, itemCount: z.number().int() }),
    },
    auth: WRITE,
    idempotent: true,
    summary: 'Start an access review: one pending item per user-role mapping in scope',
  }),
  get: getById('/access-reviews/:id', AccessReviewDetailSchema, READ,
    'Get an access review with its items and each role\'s permissions', IdParams),
  updateItem: endpoint({
    method: 'PATCH',
    path: '/access-reviews/:id/items/:itemId',
    params: ItemParams,
    body: AccessReviewItemUpdateSchema,
    responses: {
      200: z.object({
        id: UuidSchema,
        decision: AccessReviewDecisionSchema,
        notes: z.string().nullable(),
        reviewedAt: TimestampSchema.nullable(),
      }),
    },
    auth: WRITE,
    summary: 'Record the decision on one item (approved, revoked or pending) with notes',
  }),
  complete: endpoint({
    method: 'POST',
    path: '/access-reviews/:id/complete',
    params: IdParams,
    responses: {
      200: z.object({
        id: UuidSchema,
        status: z.literal('completed'),
        completedAt: TimestampSchema,
        revokedCount: z.number().int(),
      }),
    },
    auth: WRITE,
    summary: 'Complete a review with no pending items: revoked users leave the scope and their sessions end',
  }),
} as const;
