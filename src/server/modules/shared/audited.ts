import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/connection.js';
import { deleteById } from '../../db/prepared.js';
import type { RequestContext } from '../../context.js';
import { recordAudit, type AuditEntry } from '../audit/recorder.js';

/** A row an audit entry is about: the entry's resourceId, resourceName and orgId are its id, name and orgId. */
export interface AuditedRow {
  id: string;
  name: string;
  orgId: string | null;
}

/** What an entry about a row says beyond the row itself. */
export type RowAuditEntry = Omit<AuditEntry, 'resourceId' | 'resourceName' | 'orgId'>;

/** Records the audit entry of a change to `row` (in the caller's transaction). */
export function auditRow(db: Db, ctx: RequestContext, row: AuditedRow, entry: RowAuditEntry): void {
  recordAudit(db, ctx, { ...entry, resourceId: row.id, resourceName: row.name, orgId: row.orgId });
}

/** Deletes `row` from `table` by its id and records the audit entry of the deletion; run it inside the
 * transaction that checked the caller may delete the row, so the check, the delete and the entry stand or fall
 * together. */
export function deleteAudited(
  db: Db,
  ctx: RequestContext,
  table: SQLiteTable & { id: SQLiteColumn },
  row: AuditedRow,
  entry: RowAuditEntry,
): void {
  deleteById(db, table, row.id);
  auditRow(db, ctx, row, entry);
}
