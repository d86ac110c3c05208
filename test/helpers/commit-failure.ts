import { expect } from 'vitest';
import type { Db } from '../../src/server/db/connection.js';

/**
 * Makes every group commit (db/group-commit.ts) that holds an insert into TABLE fail, as a full disk or an I/O
 * error would at COMMIT: a TEMP trigger adds a row whose deferred foreign key names nothing, which SQLite checks
 * only when the transaction commits. Returns the undo.
 */
function failCommitsInserting(db: Db, table: string): () => void {
  const trigger = `temp.svc_test_fail_${table}`;
  db.$client.exec(`
    CREATE TEMP TABLE IF NOT EXISTS svc_test_parent (id INTEGER PRIMARY KEY);
    CREATE TEMP TABLE IF NOT EXISTS svc_test_orphan (
      parent_id INTEGER REFERENCES svc_test_parent (id) DEFERRABLE INITIALLY DEFERRED
    );
    CREATE TEMP TRIGGER svc_test_fail_${table} AFTER INSERT ON main.${table}
    BEGIN INSERT INTO svc_test_orphan VALUES (1); END;
  `);
  return () => db.$client.exec(`DROP TRIGGER ${trigger}`);
}

/** REQUEST, made while every commit inserting into TABLE fails, is answered 503 COMMIT_FAILED; then commits work
 * again. */
export async function expectCommitFailure(
  db: Db,
  table: string,
  request: () => Promise<{ status: number; body: unknown }>,
): Promise<void> {
  const undo = failCommitsInserting(db, table);
  try {
    const res = await request();
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'COMMIT_FAILED' });
  } finally {
    undo();
  }
}
