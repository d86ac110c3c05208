import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, applyMigrations, openDatabase, type Db } from '../../src/server/db/connection.js';
import { schemaState, shippedMigrations } from '../../src/server/ops/database.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DRIZZLE_KIT = path.join(ROOT, 'node_modules/.bin/drizzle-kit');

/** Every file under dir, relative, sorted. */
function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** The schema as SQLite records it, with whitespace normalized so formatting differences do not count. */
function schemaOf(db: Db): { type: string; name: string; tbl_name: string; sql: string | null }[] {
  const rows = db.$client
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
    .all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
  return rows.map((r) => ({ ...r, sql: r.sql?.replace(/\s+/g, ' ').trim() ?? null }));
}

/** A copy of the migrations folder whose journal stops after the first `count` entries. */
function partialFolder(dir: string, count: number): string {
  const folder = path.join(dir, `upto-${count}`);
  fs.cpSync(MIGRATIONS_DIR, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta/_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: unknown[] };
  journal.entries = journal.entries.slice(0, count);
  fs.writeFileSync(journalFile, JSON.stringify(journal, null, 2));
  return folder;
}

describe('schema and migrations (DESIGN.md "Data")', () => {
  let dir: string;
  const open: Db[] = [];
  const db = (name: string) => {
    const d = openDatabase(path.join(dir, name));
    open.push(d);
    return d;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-schema-'));
  });
  afterEach(() => {
    for (const d of open.splice(0)) d.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the TypeScript schema and the committed migrations agree (drizzle-kit generate finds nothing to do)', async () => {
    const out = path.join(dir, 'drizzle');
    fs.cpSync(MIGRATIONS_DIR, out, { recursive: true });
    const before = listFiles(out);
    // drizzle-kit prefixes --out with './', so it must be relative to the working directory.
    const result = await execa(
      DRIZZLE_KIT,
      [
        'generate',
        '--dialect',
        'sqlite',
        '--casing',
        'snake_case',
        '--schema',
        './src/server/db/schema/index.ts',
        '--out',
        path.relative(ROOT, out),
      ],
      { cwd: ROOT, reject: false, timeout: 60_000, stdin: 'ignore', env: { CI: '1' } },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(listFiles(out), `drizzle-kit wrote a migration: the schema changed without one.\n${result.stdout}`).toEqual(
      before,
    );
    expect(result.stdout).toMatch(/No schema changes/);
  }, 90_000);

  it('a database migrated from zero at once has the same schema as one upgraded one migration at a time', () => {
    const shipped = shippedMigrations();
    expect(shipped.length).toBeGreaterThan(0);

    const fresh = db('fresh.db');
    expect(applyMigrations(fresh)).toBe(shipped.length);

    const stepped = db('stepped.db');
    for (let count = 1; count <= shipped.length; count++) {
      expect(applyMigrations(stepped, partialFolder(dir, count))).toBe(1);
      expect(schemaState(stepped.$client).version).toBe(count);
      if (count === 1) {
        // Data written under the first schema must survive every later migration (table rebuilds included).
        stepped.$client.exec(`
          INSERT INTO users (id, email, name, created_at, updated_at) VALUES ('u1', 'a@example.test', 'A', '2030-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z');
          INSERT INTO sessions (id, user_id, created_at, expires_at) VALUES ('s1', 'u1', '2030-01-01T00:00:00.000Z', '2030-01-02T00:00:00.000Z');
        `);
      }
    }
    expect(applyMigrations(stepped)).toBe(0);

    expect(schemaOf(stepped)).toEqual(schemaOf(fresh));
    const applied = (d: Db) =>
      d.$client.prepare('SELECT hash, created_at FROM __drizzle_migrations ORDER BY created_at').all();
    expect(applied(stepped)).toEqual(applied(fresh));
    expect(stepped.$client.prepare('SELECT count(*) AS n FROM users').get()).toEqual({ n: 1 });
    expect(stepped.$client.prepare('SELECT count(*) AS n FROM sessions').get()).toEqual({ n: 1 });
    expect(stepped.$client.pragma('foreign_key_check')).toEqual([]);
    expect(stepped.$client.pragma('foreign_keys', { simple: true })).toBe(1);
  });

  it('reports the schema version applied against the one shipped', () => {
    const shipped = shippedMigrations();
    const d = db('v.db');
    expect(schemaState(d.$client)).toMatchObject({
      version: 0,
      shipped: shipped.length,
      pending: shipped.map((m) => m.tag),
      unknown: 0,
      latest: null,
    });
    applyMigrations(d, partialFolder(dir, 1));
    expect(schemaState(d.$client)).toMatchObject({
      version: 1,
      pending: shipped.slice(1).map((m) => m.tag),
      latest: shipped[0]?.tag,
    });
    applyMigrations(d);
    expect(schemaState(d.$client)).toMatchObject({ version: shipped.length, pending: [], latest: shipped.at(-1)?.tag });
  });
});
