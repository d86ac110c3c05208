import { and, count, desc, eq, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { NotificationListQuerySchema, NotificationMarkSchema } from '../../../contract/notifications.js';
import type { RequestContext } from '../../context.js';
import { transaction, type Db } from '../../db/connection.js';
import { inJson, preparedQueries, preparedShapes, shapeConditions, shapeOf } from '../../db/prepared.js';
import { notifications } from '../../db/schema/index.js';
import { notFound, unauthorized } from '../../errors.js';
import { newId } from '../../db/ids.js';
import { preparedPage } from '../../lib/paging.js';

export type NotificationRow = typeof notifications.$inferSelect;
export type NewNotification = Omit<typeof notifications.$inferInsert, 'id' | 'read' | 'readAt' | 'createdAt'>;

const INSERT_NOTIFICATION = `INSERT INTO notifications (id, user_id, org_id, type, priority, title, message, link, metadata, source_key, created_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;

const view = ({ sourceKey: _sourceKey, ...row }: NotificationRow) => row;

/** A user's unread count, prepared once per database (db/prepared.ts). */
const unreadOf = preparedQueries((db) =>
  db
    .select({ n: count() })
    .from(notifications)
    .where(and(eq(notifications.userId, sql.placeholder('userId')), eq(notifications.read, false)))
    .prepare(),
);

/** Marking a user's (`userId`) notifications, per shape: 'r' read (at `readAt`), else unread; 'i' only those of the
 * JSON array `ids`, else all. Only rows whose state changes: marking read again keeps the time it was first read. */
const markOf = preparedShapes((db, shape) => {
  const read = shape.includes('r');
  return db
    .update(notifications)
    .set(read ? { read: true, readAt: sql`${sql.placeholder('readAt')}` } : { read: false, readAt: null })
    .where(
      and(
        eq(notifications.userId, sql.placeholder('userId')),
        eq(notifications.read, !read),
        ...shapeConditions(shape, { i: () => inJson(notifications.id, 'ids') }),
      ),
    )
    .prepare();
});

/** Deleting one notification of a user (`id`, `userId`), and every notification of a user, prepared once per
 * database. */
const removalOf = preparedQueries((db) => ({
  one: db
    .delete(notifications)
    .where(and(eq(notifications.id, sql.placeholder('id')), eq(notifications.userId, sql.placeholder('userId'))))
    .prepare(),
  all: db
    .delete(notifications)
    .where(eq(notifications.userId, sql.placeholder('userId')))
    .prepare(),
}));

/** A page of a user's notifications and their total, per shape: 'u' unread only, 't' of one `type`. */
const listOf = preparedShapes((db, shape) => {
  const where = and(
    eq(notifications.userId, sql.placeholder('userId')),
    ...shapeConditions(shape, {
      u: () => eq(notifications.read, false),
      t: () => eq(notifications.type, sql.placeholder('type')),
    }),
  );
  return preparedPage(db, notifications, where, [desc(notifications.createdAt), sql`rowid DESC`]);
});

/** 02 §2.5 and §4.2: each user's own in-app notifications. Every read and write is bounded by the caller's
 * user id, so another user's notification answers exactly as an absent one (404). */
export class InboxService {
  constructor(private readonly db: Db) {}

  private owner(ctx: RequestContext): string {
    if (ctx.caller.kind !== 'user' || ctx.caller.userId === null) throw unauthorized('A user session is required');
    return ctx.caller.userId;
  }

  list(ctx: RequestContext, query: z.infer<typeof NotificationListQuerySchema>) {
    const userId = this.owner(ctx);
    const statements = listOf(this.db, shapeOf({ u: query.unreadOnly, t: query.type }));
    const values = { userId, type: query.type, limit: query.limit, offset: query.offset };
    const rows = statements.page.all(values);
    const total = statements.count.get(values)?.n ?? 0;
    return { notifications: rows.map(view), total, unreadCount: this.unread(userId), limit: query.limit, offset: query.offset };
  }

  private unread(userId: string): number {
    return unreadOf(this.db).get({ userId })?.n ?? 0;
  }

  unreadCount(ctx: RequestContext): { count: number } {
    return { count: this.unread(this.owner(ctx)) };
  }

  mark(ctx: RequestContext, body: z.infer<typeof NotificationMarkSchema>): { success: true } {
    const userId = this.owner(ctx);
    const ids = body.all === true || !body.ids ? undefined : body.ids;
    const read = body.read;
    transaction(this.db, () =>
      markOf(this.db, shapeOf({ r: read, i: ids !== undefined })).run({
        userId,
        readAt: read ? new Date().toISOString() : undefined,
        ids: ids && JSON.stringify(ids),
      }),
    );
    return { success: true };
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    const userId = this.owner(ctx);
    const removed = transaction(this.db, () => removalOf(this.db).one.run({ id, userId }));
    if (removed.changes === 0) throw notFound('Notification not found', 'NOTIFICATION_NOT_FOUND');
    return { success: true };
  }

  deleteAll(ctx: RequestContext): { success: true } {
    const userId = this.owner(ctx);
    transaction(this.db, () => removalOf(this.db).all.run({ userId }));
    return { success: true };
  }

  /** Writes notifications inside the caller's transaction; a row whose (user, sourceKey) exists is skipped, so
   * a replayed event does not notify twice. Returns how many were written. One compiled statement serves every
   * row: an alert's fan-out writes one per recipient, and building each insert with the query builder cost some
   * 32 KB of garbage a row (6.5 MB an alert for 200 users). */
  deliver(tx: Db, rows: NewNotification[]): number {
    if (rows.length === 0) return 0;
    const insert = tx.$client.prepare(INSERT_NOTIFICATION);
    const createdAt = new Date().toISOString();
    let written = 0;
    for (const row of rows) {
      written += insert.run(
        newId(),
        row.userId,
        row.orgId ?? null,
        row.type,
        row.priority ?? 'normal',
        row.title,
        row.message ?? '',
        row.link ?? null,
        JSON.stringify(row.metadata ?? {}),
        row.sourceKey ?? null,
        createdAt,
      ).changes;
    }
    return written;
  }
}
