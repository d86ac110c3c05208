import { text, type ReferenceConfig } from 'drizzle-orm/sqlite-core';
import { newId } from '../ids.js';

/** Every row has a UUID primary key (01 §1), time-ordered (db/ids.ts). */
export const id = () => text().primaryKey().$defaultFn(newId);

/** Timestamps are ISO 8601 strings in UTC: they sort, compare and serialize without conversion. */
export const createdAt = () => text().notNull().$defaultFn(() => new Date().toISOString());
export const updatedAt = () =>
  text()
    .notNull()
    .$defaultFn(() => new Date().toISOString());

export const json = <T>() => text({ mode: 'json' }).$type<T>();

/** A required reference to another table's row: `ref(() => users.id, { onDelete: 'cascade' })`. */
export const ref = (column: ReferenceConfig['ref'], actions?: ReferenceConfig['actions']) =>
  text().notNull().references(column, actions);

/** When a row was made and last changed: the pair every mutable table carries. */
export const timestamps = () => ({ createdAt: createdAt(), updatedAt: updatedAt() });

/** A single-use credential or link: when it was issued, when it lapses, when it was used (null: not yet). */
export const singleUse = () => ({ createdAt: createdAt(), expiresAt: text().notNull(), usedAt: text() });

/** A credential that lapses or is revoked first: when it was issued, when it lapses, when it was revoked. */
export const revocable = () => ({ createdAt: createdAt(), expiresAt: text().notNull(), revokedAt: text() });
