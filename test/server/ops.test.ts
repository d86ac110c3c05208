import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type ServerConfig } from '../../src/server/config.js';
import { openDatabase } from '../../src/server/db/connection.js';
import { partners } from '../../src/server/db/schema/index.js';
import { backupDatabase } from '../../src/server/ops/backup.js';
import { shippedMigrations } from '../../src/server/ops/database.js';
import { initDataDir } from '../../src/server/ops/init.js';
import { acquireServerLock, runningServer } from '../../src/server/ops/lock.js';
import { migrateDatabase } from '../../src/server/ops/migrate.js';
import { prepareRestore } from '../../src/server/ops/restore.js';
import { serverStatus, statusExitCode } from '../../src/server/ops/status.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { SecretBox } from '../../src/server/security/crypto.js';
import { KEY_CHECK_META } from '../../src/server/security/server-secrets.js';
import { olderDatabase } from '../helpers/migrations.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/run.js');
const SHIPPED = shippedMigrations().length;
const quiet = () => {};

/** Rows of a table in a database file, read on a connection of its own (read-write, so that closing it
 * folds in and removes the -wal and -shm it opened, as a read-only one cannot). */
function rows(file: string, sql: string): unknown[] {
  const db = new Database(file, { fileMustExist: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

const partnerNames = (file: string) =>
  (rows(file, 'SELECT name FROM partners ORDER BY name') as { name: string }[]).map((r) => r.name);

describe('svc server operations', () => {
  let root: string;
  let config: ServerConfig;
  let server: RunningServer | undefined;

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ops-'));
    config = loadConfig({
      SVC_DATA_DIR: path.join(root, 'data'),
      PORT: '0',
      SVC_ADMIN_EMAIL: 'admin@example.test',
      SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
      SVC_LOG_LEVEL: 'silent',
    });
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    fs.rmSync(root, { recursive: true, force: true });
  });

  const start = async () =>
    (server = await startServer(config, { logger: false, handleSignals: false, announce: quiet }));
  const addPartner = (db: RunningServer['db'], name: string) =>
    db.insert(partners).values({ name, slug: name.toLowerCase() }).run();

  describe('migrate', () => {
    it('creates and migrates a missing database, then has nothing to do', async () => {
      expect(await migrateDatabase(config)).toMatchObject({ applied: SHIPPED, schemaVersion: SHIPPED });
      expect(await migrateDatabase(config)).toMatchObject({ applied: 0, schemaVersion: SHIPPED, migrations: [] });
    });

    it('applies only what is pending on an older database', async () => {
      if (SHIPPED < 2) return;
      fs.mkdirSync(config.dataDir, { recursive: true });
      olderDatabase(root, config.databaseFile, 1);
      const result = await migrateDatabase(config);
      expect(result).toMatchObject({ applied: SHIPPED - 1, schemaVersion: SHIPPED });
      expect(result.migrations).toEqual(
        shippedMigrations()
          .slice(1)
          .map((m) => m.tag),
      );
    });

    it('is a read-only no-op next to a running server, and refuses (exit 6) when it would change the schema under one', async () => {
      await start();
      expect(await migrateDatabase(config)).toMatchObject({ applied: 0, schemaVersion: SHIPPED });
      await server?.close();
      server = undefined;

      fs.rmSync(config.databaseFile);
      const lock = acquireServerLock(config.dataDir);
      try {
        await expect(migrateDatabase(config)).rejects.toMatchObject({
          name: 'OpsError',
          exitCode: 6,
          code: 'SERVER_RUNNING',
        });
      } finally {
        lock.release();
      }
    });

    it('refuses a database migrated by a newer svc', async () => {
      await migrateDatabase(config);
      const db = new Database(config.databaseFile);
      db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('future', 9_999_999_999_999);
      db.close();
      await expect(migrateDatabase(config)).rejects.toMatchObject({ exitCode: 6, code: 'SCHEMA_TOO_NEW' });
    });
  });

  describe('status', () => {
    it('reports a missing database with exit 8', async () => {
      const status = await serverStatus(config, { baseUrl: 'http://127.0.0.1:9', timeoutMs: 500 });
      expect(status.database).toMatchObject({ exists: false, sizeBytes: null });
      expect(status.schema).toMatchObject({ version: null, shipped: SHIPPED });
      expect(status.server).toMatchObject({ reachable: false, pid: null });
      expect(statusExitCode(status)).toBe(8);
    });

    it('reports an initialized data dir offline, and a running server with its health', async () => {
      await initDataDir(config, quiet);
      const offline = await serverStatus(config, { baseUrl: 'http://127.0.0.1:9', timeoutMs: 500 });
      expect(offline).toMatchObject({
        dataDir: config.dataDir,
        database: { file: config.databaseFile, exists: true, error: null },
        schema: { version: SHIPPED, shipped: SHIPPED, pending: [], unknown: 0 },
        secrets: 'file',
        server: { reachable: false, pid: null },
      });
      expect(offline.database.sizeBytes).toBeGreaterThan(0);
      expect(offline.initializedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(statusExitCode(offline)).toBe(0);

      const running = await start();
      const online = await serverStatus(config, { baseUrl: running.address });
      expect(online.server).toMatchObject({
        pid: process.pid,
        reachable: true,
        health: { status: 'ok' },
        ready: { status: 'ready' },
        error: null,
      });
      expect(statusExitCode(online)).toBe(0);
    });

    it('exits 8 when a server answers but is not ready', async () => {
      await initDataDir(config, quiet);
      const fake = http.createServer((req, res) => {
        res.writeHead(req.url === '/health' ? 200 : 503, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            req.url === '/health' ? { status: 'ok' } : { status: 'not_ready', checks: { database: 'locked' } },
          ),
        );
      });
      await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = fake.address() as { port: number };
        const status = await serverStatus(config, { baseUrl: `http://127.0.0.1:${port}` });
        expect(status.server).toMatchObject({
          reachable: true,
          ready: { status: 'not_ready' },
          error: '/health/ready answered HTTP 503',
        });
        expect(statusExitCode(status)).toBe(8);
      } finally {
        await new Promise((resolve) => fake.close(resolve));
      }
    });
  });

  describe('backup', () => {
    it('takes a consistent, self-contained, private copy while the server runs and writes', async () => {
      const running = await start();
      addPartner(running.db, 'Before');
      const target = path.join(root, 'backup.db');
      // Writes keep landing in the live database while the copy is taken.
      let writes = 0;
      const writer = setInterval(() => addPartner(running.db, `During${writes++}`), 1);
      let result;
      try {
        result = await backupDatabase(config, target);
      } finally {
        clearInterval(writer);
      }
      expect(result).toMatchObject({ file: target, schemaVersion: SHIPPED, databaseFile: config.databaseFile });
      expect(result.sizeBytes).toBe(fs.statSync(target).size);
      expect(fs.statSync(target).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(root).sort()).toEqual(['backup.db', 'data']);

      const copy = new Database(target, { readonly: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(copy.pragma('journal_mode', { simple: true })).toBe('delete');
        const names = (copy.prepare('SELECT name FROM partners').all() as { name: string }[]).map((r) => r.name);
        expect(names).toContain('Before');
        // A snapshot: every row it has is whole, and it has the users the server created at first start.
        expect(copy.prepare('SELECT count(*) AS n FROM users').get()).toEqual({ n: 1 });
      } finally {
        copy.close();
      }
    });

    it('refuses to overwrite without --force (exit 2, as an export\'s --out), and replaces atomically with it', async () => {
      await initDataDir(config, quiet);
      const target = path.join(root, 'backup.db');
      fs.writeFileSync(target, 'precious');
      await expect(backupDatabase(config, target)).rejects.toMatchObject({ exitCode: 2, code: 'FILE_EXISTS' });
      expect(fs.readFileSync(target, 'utf8')).toBe('precious');
      await backupDatabase(config, target, { force: true });
      expect(rows(target, 'SELECT count(*) AS n FROM users')).toEqual([{ n: 1 }]);
      expect(fs.readdirSync(root).sort()).toEqual(['backup.db', 'data']);

      // --with-secrets: an existing FILE.secrets.json alone refuses the same way, and nothing is written.
      const other = path.join(root, 'other.db');
      fs.writeFileSync(`${other}.secrets.json`, 'precious');
      await expect(backupDatabase(config, other, { withSecrets: true })).rejects.toMatchObject({ exitCode: 2, code: 'FILE_EXISTS' });
      expect(fs.readFileSync(`${other}.secrets.json`, 'utf8')).toBe('precious');
      expect(fs.existsSync(other)).toBe(false);
    });

    it('fails with exit 8 without a database, and refuses to write over the database itself', async () => {
      await expect(backupDatabase(config, path.join(root, 'b.db'))).rejects.toMatchObject({
        exitCode: 8,
        code: 'DATABASE_MISSING',
      });
      await initDataDir(config, quiet);
      await expect(backupDatabase(config, config.databaseFile, { force: true })).rejects.toMatchObject({ exitCode: 2 });
    });
  });

  describe('restore', () => {
    it('puts a backup back, keeps the replaced database, and applies migrations', async () => {
      const running = await start();
      addPartner(running.db, 'Kept');
      const backup = path.join(root, 'backup.db');
      await backupDatabase(config, backup);
      addPartner(running.db, 'Lost');
      await running.close();
      server = undefined;

      const plan = await prepareRestore(config, backup);
      expect(plan).toMatchObject({
        source: backup,
        databaseFile: config.databaseFile,
        replaces: true,
        schemaVersion: SHIPPED,
        shippedSchemaVersion: SHIPPED,
      });
      // The data dir is held from validation to commit: no server can start in between.
      expect(runningServer(config.dataDir)).toMatchObject({ pid: process.pid });
      const result = await plan.commit();
      expect(runningServer(config.dataDir)).toBeUndefined();

      expect(result).toMatchObject({ applied: 0, schemaVersion: SHIPPED, warnings: [] });
      expect(result.previous).toMatch(/svc\.db\.before-restore-\d{8}T\d{6}Z$/);
      // No temp file and no sidecar left behind (checked before this test opens anything itself).
      expect(fs.readdirSync(config.dataDir).filter((f) => /\.tmp$|-wal$|-shm$|-journal$/.test(f))).toEqual([]);
      expect(partnerNames(config.databaseFile)).toEqual(['Kept']);
      expect(partnerNames(result.previous ?? '')).toEqual(['Kept', 'Lost']);

      // The server starts on the restored database.
      const again = await start();
      expect(partnerNames(config.databaseFile)).toEqual(['Kept']);
      expect((await fetch(`${again.address}/health/ready`)).status).toBe(200);
    });

    it('keeps what only the -wal of a crashed server held with the replaced database, and never lets that -wal meet the backup', async () => {
      await initDataDir(config, quiet);
      const backup = path.join(root, 'backup.db');
      await backupDatabase(config, backup);
      // A crash: committed rows only in svc.db-wal (copied while a connection still had them there).
      const crashedDir = path.join(root, 'crashed');
      fs.mkdirSync(crashedDir);
      const live = openDatabase(config.databaseFile);
      live.$client.pragma('wal_autocheckpoint = 0');
      addPartner(live, 'OnlyInWal');
      fs.copyFileSync(config.databaseFile, path.join(crashedDir, 'svc.db'));
      fs.copyFileSync(`${config.databaseFile}-wal`, path.join(crashedDir, 'svc.db-wal'));
      live.$client.close();
      fs.copyFileSync(path.join(config.dataDir, 'secrets.json'), path.join(crashedDir, 'secrets.json'));

      const crashed = loadConfig({ SVC_DATA_DIR: crashedDir });
      const result = await (await prepareRestore(crashed, backup)).commit();
      expect(fs.existsSync(`${crashed.databaseFile}-wal`)).toBe(false);
      expect(fs.existsSync(`${crashed.databaseFile}-shm`)).toBe(false);
      expect(partnerNames(crashed.databaseFile)).toEqual([]);
      expect(partnerNames(result.previous ?? '')).toEqual(['OnlyInWal']);
    });

    it('migrates a backup taken by an older svc', async () => {
      if (SHIPPED < 2) return;
      const backup = path.join(root, 'old.db');
      olderDatabase(root, backup, 1);
      const plan = await prepareRestore(config, backup);
      expect(plan).toMatchObject({ replaces: false, schemaVersion: 1, shippedSchemaVersion: SHIPPED });
      const result = await plan.commit();
      expect(result).toMatchObject({ previous: null, applied: SHIPPED - 1, schemaVersion: SHIPPED });
      // Restored into an empty data dir: the server keys that belong to the backup are not there.
      expect(result.warnings.join(' ')).toMatch(/secrets\.json/);
    });

    it('refuses while a server runs against the data dir (exit 6)', async () => {
      await start();
      const backup = path.join(root, 'backup.db');
      await backupDatabase(config, backup);
      await expect(prepareRestore(config, backup)).rejects.toMatchObject({
        exitCode: 6,
        code: 'SERVER_RUNNING',
        message: expect.stringContaining(`pid ${process.pid}`),
      });
      // The running server's pid file is untouched.
      expect(runningServer(config.dataDir)).toMatchObject({ pid: process.pid });
    });

    it.each([
      ['not SQLite', (file: string) => fs.writeFileSync(file, 'not a database '.repeat(500)), /not an SQLite database/],
      [
        'SQLite but not svc',
        (file: string) => {
          const db = new Database(file);
          db.exec('CREATE TABLE notes (body TEXT)');
          db.close();
        },
        /not an svc database/,
      ],
    ])('refuses a file that is %s (exit 2), changing nothing', async (_what, make, message) => {
      await initDataDir(config, quiet);
      const before = fs.readFileSync(config.databaseFile);
      const bad = path.join(root, 'bad.db');
      make(bad);
      await expect(prepareRestore(config, bad)).rejects.toMatchObject({
        exitCode: 2,
        code: 'BACKUP_INVALID',
        message: expect.stringMatching(message),
      });
      expect(fs.readFileSync(config.databaseFile).equals(before)).toBe(true);
      expect(runningServer(config.dataDir)).toBeUndefined();
      expect(fs.readdirSync(config.dataDir).sort()).toEqual(['secrets.json', 'svc.db']);
    });

    it('refuses a backup with a schema newer than this build (exit 6)', async () => {
      await initDataDir(config, quiet);
      const backup = path.join(root, 'future.db');
      await backupDatabase(config, backup);
      const db = new Database(backup);
      db.prepare('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)').run('future', 9_999_999_999_999);
      db.close();
      await expect(prepareRestore(config, backup)).rejects.toMatchObject({ exitCode: 6, code: 'SCHEMA_TOO_NEW' });
    });

    it('abort() leaves everything as it was', async () => {
      await initDataDir(config, quiet);
      const backup = path.join(root, 'backup.db');
      await backupDatabase(config, backup);
      const plan = await prepareRestore(config, backup);
      plan.abort();
      expect(fs.readdirSync(config.dataDir).sort()).toEqual(['secrets.json', 'svc.db']);
    });
  });

  describe('issue 9: status finds the server where it listens', () => {
    it('reads the URL from the pid file, whatever the port', async () => {
      const running = await start();
      const status = await serverStatus(config);
      expect(status.server).toMatchObject({ pid: process.pid, url: running.address, reachable: true });
      expect(running.address).not.toBe('http://127.0.0.1:3000');
    });
  });

  describe('issue 9: the server keys belong to the database', () => {
    const secretsFile = () => path.join(config.dataDir, 'secrets.json');
    const otherKeys = () =>
      JSON.stringify({ jwtSecret: 'j'.repeat(48), encryptionKey: 'cd'.repeat(32), enrollmentPepper: 'p'.repeat(40) });
    const meta = (key: string) => rows(config.databaseFile, `SELECT value FROM server_meta WHERE key = '${key}'`);

    it('a start with keys of another database is refused with SERVER_KEYS_MISMATCH, naming the fix', async () => {
      await initDataDir(config, quiet);
      expect(meta(KEY_CHECK_META)).toHaveLength(1);
      fs.writeFileSync(secretsFile(), otherKeys());
      await expect(start()).rejects.toMatchObject({
        exitCode: 6,
        code: 'SERVER_KEYS_MISMATCH',
        hint: expect.stringContaining('--with-secrets'),
      });
      server = undefined;
      // Nothing left holding the data dir.
      expect(runningServer(config.dataDir)).toBeUndefined();
    });

    it('a start without the keys of a database that needs them is refused, and generates none', async () => {
      await initDataDir(config, quiet);
      fs.rmSync(secretsFile());
      await expect(start()).rejects.toMatchObject({ exitCode: 6, code: 'SERVER_KEYS_MISSING' });
      server = undefined;
      expect(fs.existsSync(secretsFile())).toBe(false);
    });

    it('a database from before the key check gets one on start, unless its sealed values need other keys', async () => {
      await initDataDir(config, quiet);
      const db = new Database(config.databaseFile);
      db.prepare('DELETE FROM server_meta WHERE key = ?').run(KEY_CHECK_META);
      db.close();
      const running = await start();
      expect(meta(KEY_CHECK_META)).toHaveLength(1);
      await running.close();
      server = undefined;

      // An older database whose MFA secret was sealed under other keys.
      const old = new Database(config.databaseFile);
      old.prepare('DELETE FROM server_meta WHERE key = ?').run(KEY_CHECK_META);
      old.prepare('UPDATE users SET mfa_secret_enc = ?').run(new SecretBox('cd'.repeat(32)).seal('JBSWY3DPEHPK3PXP'));
      old.close();
      await expect(start()).rejects.toMatchObject({ code: 'SERVER_KEYS_MISMATCH' });
      server = undefined;
    });

    it('a sealed value the keys cannot open is a 503 with a code, never a 500', async () => {
      const running = await start();
      running.db.$client.prepare('UPDATE users SET mfa_enabled = 1, mfa_secret_enc = ?').run('v1.AAAA.BBBB.CCCC');
      const login = await fetch(`${running.address}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@example.test', password: 'Admin-Passw0rd!' }),
      });
      const { tempToken } = (await login.json()) as { tempToken: string };
      const verify = await fetch(`${running.address}/api/v1/auth/mfa/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tempToken, code: '123456' }),
      });
      expect(verify.status).toBe(503);
      expect(await verify.json()).toMatchObject({ code: 'SERVER_KEYS_MISMATCH' });
    });

    it('backup --with-secrets writes the keys beside it (0600); restore into an empty data dir refuses without them and puts them back with --with-secrets', async () => {
      await initDataDir(config, quiet);
      const backup = path.join(root, 'b.db');
      const result = await backupDatabase(config, backup, { withSecrets: true });
      expect(result.secretsFile).toBe(`${backup}.secrets.json`);
      expect(fs.statSync(`${backup}.secrets.json`).mode & 0o777).toBe(0o600);
      expect(JSON.parse(fs.readFileSync(`${backup}.secrets.json`, 'utf8'))).toEqual(
        JSON.parse(fs.readFileSync(secretsFile(), 'utf8')),
      );

      const fresh = loadConfig({ SVC_DATA_DIR: path.join(root, 'fresh'), PORT: '0', SVC_LOG_LEVEL: 'silent' });
      await expect(prepareRestore(fresh, backup)).rejects.toMatchObject({ exitCode: 6, code: 'SERVER_KEYS_MISSING' });
      fs.mkdirSync(fresh.dataDir, { recursive: true });
      fs.writeFileSync(path.join(fresh.dataDir, 'secrets.json'), otherKeys());
      await expect(prepareRestore(fresh, backup)).rejects.toMatchObject({ exitCode: 6, code: 'SERVER_KEYS_MISMATCH' });
      expect(fs.existsSync(fresh.databaseFile)).toBe(false);

      const restored = await (await prepareRestore(fresh, backup, { withSecrets: true })).commit();
      expect(restored.secrets).toBe(path.join(fresh.dataDir, 'secrets.json'));
      expect(restored.previousSecrets).toMatch(/secrets\.json\.before-restore-/);
      expect(fs.statSync(restored.secrets ?? '').mode & 0o777).toBe(0o600);
      server = await startServer(fresh, { logger: false, handleSignals: false, announce: quiet });
      expect((await fetch(`${server.address}/health/ready`)).status).toBe(200);
    });

    it('restore --with-secrets without the keys file is refused (exit 2)', async () => {
      await initDataDir(config, quiet);
      const backup = path.join(root, 'b.db');
      await backupDatabase(config, backup);
      await expect(prepareRestore(config, backup, { withSecrets: true })).rejects.toMatchObject({
        exitCode: 2,
        code: 'SECRETS_NOT_FOUND',
      });
    });
  });

  describe('issue 9: every file in the data dir is 0600 and the dir 0700, whatever the umask', () => {
    it('with umask 000: database, -wal, -shm, keys, pid file, log, backups and the copies a restore keeps', async () => {
      const before = process.umask(0);
      try {
        const logged = loadConfig({
          SVC_DATA_DIR: path.join(root, 'data'),
          PORT: '0',
          SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
          SVC_LOG_LEVEL: 'info',
        });
        const running = await startServer(logged, { handleSignals: false, announce: quiet });
        server = running;
        await fetch(`${running.address}/health`);
        const mode = (file: string) => fs.statSync(file).mode & 0o777;
        expect(mode(logged.dataDir)).toBe(0o700);
        const files = fs.readdirSync(logged.dataDir).sort();
        expect(files).toEqual(['secrets.json', 'server.log', 'server.pid', 'svc.db', 'svc.db-shm', 'svc.db-wal']);
        for (const file of files) expect([file, mode(path.join(logged.dataDir, file))]).toEqual([file, 0o600]);

        const backup = path.join(root, 'b.db');
        await backupDatabase(logged, backup, { withSecrets: true });
        expect(mode(backup)).toBe(0o600);
        await running.close();
        server = undefined;
        const result = await (await prepareRestore(logged, backup, { withSecrets: true })).commit();
        for (const file of fs.readdirSync(logged.dataDir))
          expect([file, mode(path.join(logged.dataDir, file))]).toEqual([file, 0o600]);
        expect(result.previous).not.toBeNull();
      } finally {
        process.umask(before);
      }
    });
  });

  describe('the commands (built CLI)', () => {
    const cli = (args: string[]) =>
      execa('node', [BIN, 'server', ...args], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: root,
          XDG_CONFIG_HOME: path.join(root, 'config'),
          SVC_DATA_DIR: config.dataDir,
          SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
        },
        extendEnv: false,
        reject: false,
        timeout: 20_000,
      });

    it('migrate, init, status, backup and restore: JSON on stdout, exit codes, confirmation', async () => {
      let r = await cli(['status', '-o', 'json', '--port', '9']);
      expect(r.exitCode).toBe(8);
      expect(JSON.parse(r.stdout).database.exists).toBe(false);
      expect(r.stderr).toContain('svc server init');

      r = await cli(['migrate', '-o', 'json']);
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ applied: SHIPPED, schemaVersion: SHIPPED });

      r = await cli(['init', '-o', 'json']);
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout).created).toMatchObject({ administrator: true, secrets: true });

      r = await cli(['status', '-o', 'json', '--port', '9']);
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        schema: { version: SHIPPED, shipped: SHIPPED, pending: [] },
        server: { reachable: false },
      });

      const backup = path.join(root, 'b.db');
      r = await cli(['backup', backup, '-o', 'json']);
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ file: backup, schemaVersion: SHIPPED });
      expect(r.stderr).toContain(backup);
      r = await cli(['backup', backup]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('--force');

      // Destructive: without a terminal and without --yes it refuses with exit 2 and changes nothing.
      r = await cli(['restore', backup]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('--yes');
      expect(fs.readdirSync(config.dataDir).sort()).toEqual(['secrets.json', 'svc.db']);

      r = await cli(['restore', backup, '--yes', '-o', 'json']);
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ source: backup, applied: 0, schemaVersion: SHIPPED });

      r = await cli(['restore', path.join(root, 'missing.db'), '--yes']);
      expect(r.exitCode).toBe(2);
    }, 90_000);
  });

  it('commands other than `svc server …` never import server code, and server commands only inside run()', () => {
    const files = (fs.readdirSync(path.join(ROOT, 'src'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && (f.startsWith(`commands${path.sep}`) || f.startsWith(`cli${path.sep}`)))
      .map((f) => path.join(ROOT, 'src', f));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      // Static value imports of server code (type-only imports are erased).
      const offending = text.match(/^import (?!type )[^;]*from '(?:\.\.\/)+server\/[^']*';/gm) ?? [];
      expect(offending, file).toEqual([]);
    }
  });
});
