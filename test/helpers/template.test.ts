import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { initDataDir } from '../../src/server/ops/init.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, loginAs, type TestApp } from './server.js';

/** What a first start leaves in a database, without what differs between two starts (ids, times, hashes). */
function firstStartState(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const schema = db
      .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
      .all() as {
      name: string;
      type: string;
    }[];
    const counts = Object.fromEntries(
      schema
        .filter((s) => s.type === 'table')
        .map((s) => [s.name, (db.prepare(`SELECT count(*) AS n FROM "${s.name}"`).get() as { n: number }).n]),
    );
    return {
      schema,
      counts,
      migrations: db.prepare('SELECT hash FROM __drizzle_migrations ORDER BY id').all(),
      roles: db.prepare('SELECT id, name FROM roles ORDER BY id').all(),
      users: db.prepare('SELECT email, is_system_admin, status FROM users').all(),
    };
  } finally {
    db.close();
  }
}

describe('test data dirs are copies of a first-started template (test/helpers/template.ts)', () => {
  const open: TestApp[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const t of open.splice(0)) await t.close();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  const app = async (env: Record<string, string> = {}) => {
    const t = await createTestApp(env);
    open.push(t);
    return t;
  };

  it('a copy holds what a fresh first start writes: schema, migrations, built-in roles, the administrator, mode 0600 keys', async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fresh-'));
    dirs.push(fresh);
    await initDataDir(
      loadConfig({ SVC_DATA_DIR: fresh, SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD }),
      () => {},
    );
    const t = await app();
    await t.app.close();
    expect(firstStartState(path.join(t.dataDir, 'svc.db'))).toEqual(firstStartState(path.join(fresh, 'svc.db')));
    expect(fs.statSync(path.join(t.dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('two copies share no rows', async () => {
    const [a, b] = await Promise.all([app(), app()]);
    await a.call('POST', '/api/v1/orgs/partners', {
      token: await loginAs(a),
      body: { name: 'Only A', slug: 'only-a' },
    });
    const partners = await b.call('GET', '/api/v1/orgs/partners', { token: await loginAs(b) });
    expect(partners.body.data ?? partners.body).toEqual([]);
  });

  it('another administrator in the environment gets its own first start', async () => {
    const t = await app({ SVC_ADMIN_EMAIL: 'other-admin@example.test', SVC_ADMIN_PASSWORD: 'Other-Passw0rd!' });
    await expect(loginAs(t, 'other-admin@example.test', 'Other-Passw0rd!')).resolves.toBeTruthy();
    await expect(loginAs(t)).rejects.toThrow(/401/);
  });

  it('server keys from the environment: no key file, as on a fresh start', async () => {
    const t = await app({
      SVC_JWT_SECRET: 'j'.repeat(40),
      SVC_ENCRYPTION_KEY: 'a'.repeat(64),
      SVC_ENROLLMENT_PEPPER: 'p'.repeat(40),
    });
    expect(fs.existsSync(path.join(t.dataDir, 'secrets.json'))).toBe(false);
    await expect(loginAs(t)).resolves.toBeTruthy();
  });
});
