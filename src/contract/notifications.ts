import { z } from 'zod';
import { deleteById } from './builders.js';
import { JsonObjectSchema, QueryBooleanSchema, SuccessSchema, TimestampSchema, UuidSchema } from './common.js';
import { endpoint } from './endpoint.js';

export const NotificationTypeSchema = z.enum(['alert', 'device', 'script', 'automation', 'system', 'user', 'security']);
export const NotificationPrioritySchema = z.enum(['low', 'normal', 'high', 'urgent']);

/** 02 §2.5: the full record (05-wire-notes 4.2: rows are full records). */
export const NotificationSchema = z.object({
  id: UuidSchema,
  userId: UuidSchema,
  orgId: UuidSchema.nullable(),
  type: NotificationTypeSchema,
  priority: NotificationPrioritySchema,
  title: z.string(),
  message: z.string(),
  link: z.string().nullable(),
  metadata: JsonObjectSchema,
  read: z.boolean(),
  readAt: TimestampSchema.nullable(),
  createdAt: TimestampSchema,
});
export type Notification = z.infer<typeof NotificationSchema>;

const Count = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).optional().default(fallback);

/** 02 §4.2: limit default 50, offset default 0. 05-wire-notes: the limit is not clamped; svc refuses values
 * outside 1-1000 with a 400 instead of reading a whole inbox into one answer (docs/api-notes.md). */
export const NotificationListQuerySchema = z.object({
  limit: Count(50, 1, 1000).describe('How many to return (default 50, at most 1000)'),
  offset: Count(0, 0, 10_000_000).describe('How many of the newest to skip (default 0)'),
  unreadOnly: QueryBooleanSchema.optional().describe('true: only unread notifications'),
  type: NotificationTypeSchema.optional().describe('Only notifications of this type'),
});

export const NotificationListSchema = z.object({
  notifications: z.array(NotificationSchema),
  total: z.number().int(),
  unreadCount: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});

export const UnreadCountSchema = z.object({ count: z.number().int() });

/** 02 §4.2 `PATCH /notifications/read`: ids (UUIDs, 05-wire-notes) or all; read defaults to true. */
export const NotificationMarkSchema = z
  .strictObject({
    ids: z.array(UuidSchema).max(1000).optional().describe('Notifications to mark'),
    all: z.boolean().optional().describe('Mark every notification of the caller'),
    read: z.boolean().optional().default(true).describe('true: mark read (default); false: mark unread'),
  })
  .refine((v) => v.all === true || (v.ids !== undefined && v.ids.length > 0), {
    message: 'give ids (at least one) or all: true',
    path: ['ids'],
  });

/** 05-wire-notes 4.2: bearer only (a user's own inbox; API keys have no inbox). */
const OWNER = { sessionOnly: true } as const;

/** 02 §4.2: every route acts on the caller's own notifications only. */
export const notifications = {
  list: endpoint({
    method: 'GET',
    path: '/notifications',
    query: NotificationListQuerySchema,
    responses: { 200: NotificationListSchema },
    auth: OWNER,
    summary: "List the caller's in-app notifications, newest first, with the unread count",
  }),
  unreadCount: endpoint({
    method: 'GET',
    path: '/notifications/unread-count',
    responses: { 200: UnreadCountSchema },
    auth: OWNER,
    summary: "Count the caller's unread notifications",
  }),
  mark: endpoint({
    method: 'PATCH',
    path: '/notifications/read',
    body: NotificationMarkSchema,
    responses: { 200: SuccessSchema },
    auth: OWNER,
    summary: 'Mark notifications read or unread (some by id, or all)',
  }),
  delete: deleteById('/notifications/:id', SuccessSchema, OWNER, 'Delete one of your notifications'),
  deleteAll: endpoint({
    method: 'DELETE',
    path: '/notifications',
    responses: { 200: SuccessSchema },
    auth: OWNER,
    summary: 'Delete all of your notifications',
  }),
} as const;
