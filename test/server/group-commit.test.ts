import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/server/db/connection.js';
import { groupCommits, type GroupCommit } from '../../src/server/db/group-commit.js';
import { installReplyRelease } from '../../src/server/http/reply-release.js';
import { installErrorHandler } from '../../src/server/http/error-handler.js';
import { type TestApp, useAdminApp } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GROUP_COMMIT = path.join(ROOT, 'src/server/db/group-commit.ts');
const CONNECTION = path.join(ROOT, 'src/server/db/connection.ts');
/** Every child process is ended by then, whatever it is doing. */
const CHILD_TIMEOUT_MS = 60_000;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** db/group-commit.ts: the transactions of one event-loop turn commit together; nothing is answered before. */
describe('group commit (db/group-commit.ts)', () => {
  let dir: string;
  let file: string;
  let db: Db;
  let commits: GroupCommit;
  /** Another connection to the same file: what another process (or a restart) sees. */
  let other: Database.Database;
  const names = () => other.prepare<[], string>('SELECT name FROM t ORDER BY name').pluck().all();

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-group-'));
    file = path.join(dir, 'svc.db');
    db = openDatabase(file);
    db.$client.exec(`
      CREATE TABLE t (name TEXT PRIMARY KEY);
      CREATE TABLE parent (id INTEGER PRIMARY KEY);
      CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
    `);
    commits = groupCommits(db.$client);
    other = new Database(file);
    other.pragma('busy_timeout = 5000');
  });
  afterEach(() => {
    commits.stop();
    other.close();
    db.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const insert = (name: string) => db.$client.transaction(() => db.$client.prepare('INSERT INTO t (name) VALUES (?)').run(name))();

  it('the transactions of one turn share one commit; a failing one rolls back only its own writes', async () => {
    insert('a');
    expect(() =>
      db.$client.transaction(() => {
        db.$client.prepare('INSERT INTO t (name) VALUES (?)').run('b');
        throw new Error('refused');
      })(),
    ).toThrow('refused');
    insert('c');
    expect(commits.open).toBe(true);
    // Not committed yet: another connection sees nothing of the group.
    expect(names()).toEqual([]);
    await commits.settled();
    expect(names()).toEqual(['a', 'c']);
    expect(commits.committed).toBe(1);
    expect(commits.open).toBe(false);
    expect(commits.settled()).toBeUndefined();
  });

  it('when the first transaction of a turn fails, no group stays open and the next one starts its own', async () => {
    expect(() =>
      db.$client.transaction(() => {
        db.$client.prepare('INSERT INTO t (name) VALUES (?)').run('first');
        throw new Error('refused');
      })(),
    ).toThrow('refused');
    expect(commits.open).toBe(false);
    expect(db.$client.inTransaction).toBe(false);
    insert('second');
    await commits.settled();
    expect(names()).toEqual(['second']);
  });

  it('a commit that fails fails every transaction of its group, and the next group starts clean', async () => {
    insert('kept-back');
    // Checked only by the outermost COMMIT: a deferred foreign key to a parent that does not exist.
    db.$client.transaction(() => db.$client.prepare('INSERT INTO child (parent_id) VALUES (42)').run())();
    await expect(commits.settled()).rejects.toMatchObject({ kind: 'unavailable', code: 'COMMIT_FAILED' });
    expect(commits.failed).toBe(1);
    expect(db.$client.inTransaction).toBe(false);
    expect(names()).toEqual([]);
    insert('after');
    await commits.settled();
    expect(names()).toEqual(['after']);
  });

  it('savepoint journals are kept in memory (temp_store MEMORY): a group past 64 KiB of them still rolls a failing member back alone', async () => {
    expect(db.$client.pragma('temp_store', { simple: true })).toBe(2);
    const big = 'x'.repeat(8 * 1024);
    const write = (i: number, fail: boolean) =>
      db.$client.transaction(() => {
        db.$client.prepare('INSERT INTO t (name) VALUES (?)').run(`${String(i).padStart(3, '0')}${big}`);
        if (fail) throw new Error('member fails');
      })();
    const outcomes = Array.from({ length: 40 }, (_, i) => {
      try {
        write(i, i % 10 === 3);
        return 'ok';
      } catch {
        return 'failed';
      }
    });
    expect(commits.open).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcomes.filter((o) => o === 'failed')).toHaveLength(4);
    const kept = names().map((n) => Number(n.slice(0, 3)));
    expect(kept).toEqual(Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 10 !== 3));
  });

  it('stop commits what is open and gives the connection back its own transactions (each committed at once)', () => {
    insert('open');
    commits.stop();
    expect(names()).toEqual(['open']);
    insert('alone');
    expect(commits.open).toBe(false);
    expect(names()).toEqual(['alone', 'open']);
  });

  it("every variant joins the group, nests in savepoints and carries better-sqlite3's properties; a made function called after stop commits at once", async () => {
    type Insert = (this: void, name: string) => unknown;
    type Variants = Insert & Record<'default' | 'deferred' | 'immediate' | 'exclusive', Insert> & { database: unknown };
    const tx = db.$client.transaction((name: string) => db.$client.prepare('INSERT INTO t (name) VALUES (?)').run(name)) as unknown as Variants;
    for (const variant of [tx, tx.deferred, tx.immediate, tx.exclusive] as Variants[]) {
      expect(variant.database).toBe(db.$client);
      expect([variant.default, variant.deferred, variant.immediate, variant.exclusive]).toEqual([tx, tx.deferred, tx.immediate, tx.exclusive]);
    }
    tx('v-default');
    tx.immediate('v-immediate');
    // A member with a nested transaction that fails: the inner one's writes go, the member's own stay.
    db.$client.transaction(() => {
      tx.deferred('v-deferred');
      expect(() =>
        db.$client.transaction(() => {
          tx.exclusive('inner');
          throw new Error('inner refused');
        })(),
      ).toThrow('inner refused');
    })();
    expect(() => db.$client.transaction(() => Promise.resolve())()).toThrow('Transaction function cannot return a promise');
    expect(commits.committed).toBe(0);
    await commits.settled();
    expect(commits.committed).toBe(1);
    expect(names()).toEqual(['v-default', 'v-deferred', 'v-immediate']);
    commits.stop();
    tx.immediate('after-stop');
    expect(names()).toContain('after-stop');
    expect(() => (db.$client.transaction as (fn: unknown) => unknown)('not a function')).toThrow(TypeError);
  });

  describe('over HTTP (http/reply-release.ts)', () => {
    let app: FastifyInstance;
    beforeEach(async () => {
      app = Fastify();
      installErrorHandler(app);
      installReplyRelease(app, commits);
      app.post<{ Body: { name: string; orphan?: boolean } }>('/write', async (request) => {
        if (request.body.orphan) db.$client.transaction(() => db.$client.prepare('INSERT INTO child (parent_id) VALUES (7)').run())();
        else insert(request.body.name);
        // What another process saw at the moment the handler was done.
        return { seenElsewhere: names() };
      });
      app.get('/read', async () => ({ ok: true }));
      await app.ready();
    });
    afterEach(async () => {
      await app.close();
    });

    it('concurrent writes join one group and each reply is sent only after the commit', async () => {
      const replies = await Promise.all(
        ['x', 'y', 'z'].map(async (name) => {
          const res = await app.inject({ method: 'POST', url: '/write', payload: { name } });
          // The moment this reply arrived, the write it reports is on disk for everyone.
          return { status: res.statusCode, body: res.json<{ seenElsewhere: string[] }>(), seen: names() };
        }),
      );
      for (const reply of replies) {
        expect(reply.status).toBe(200);
        expect(reply.body.seenElsewhere).toEqual([]);
        expect(reply.seen).toEqual(['x', 'y', 'z']);
      }
      expect(commits.committed).toBe(1);
    });

    it('when the commit fails, every request of the group is answered 503 COMMIT_FAILED and nothing is kept', async () => {
      const [good, orphan] = await Promise.all([
        app.inject({ method: 'POST', url: '/write', payload: { name: 'good' } }),
        app.inject({ method: 'POST', url: '/write', payload: { name: 'unused', orphan: true } }),
      ]);
      for (const res of [good, orphan]) {
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: 'COMMIT_FAILED' });
      }
      expect(names()).toEqual([]);
      const again = await app.inject({ method: 'POST', url: '/write', payload: { name: 'good' } });
      expect(again.statusCode).toBe(200);
      expect(names()).toEqual(['good']);
    });

    it('a reply with no group open is sent at the end of its turn, with no commit', async () => {
      const res = await app.inject({ method: 'GET', url: '/read' });
      expect(res.statusCode).toBe(200);
      expect(commits.committed).toBe(0);
    });
  });

  describe('the replies of a turn leave together at its end (http/reply-release.ts)', () => {
    let app: FastifyInstance;
    /** What happened, in order: a handler's turn ending, a reply leaving. */
    let events: string[];
    /** What the server logged. */
    let logs: string[];
    beforeEach(async () => {
      events = [];
      logs = [];
      app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } } });
      installErrorHandler(app);
      installReplyRelease(app, commits);
      app.addHook('onRequest', async (request, reply) => {
        const end = reply.raw.end.bind(reply.raw) as (...args: unknown[]) => unknown;
        reply.raw.end = ((...args: unknown[]) => {
          // A socket that fails as the reply is written (`?broken`).
          if (request.url.includes('broken')) throw new Error('the socket is gone');
          events.push(`sent ${request.url}`);
          return end(...args);
        }) as typeof reply.raw.end;
      });
      app.get('/read', async (request) => {
        // Queued before the reply is made: runs when the turn of the handler is over.
        setImmediate(() => events.push(`turn of ${request.url} over`));
        return { ok: true };
      });
      app.get('/fails', async () => {
        throw Object.assign(new Error('nope'), { statusCode: 418 });
      });
      await app.ready();
    });
    afterEach(async () => {
      await app.close();
    });

    it('a reply made with no group open leaves when its turn is over, not at once', async () => {
      const res = await app.inject({ method: 'GET', url: '/read?a' });
      expect(res.statusCode).toBe(200);
      expect(events).toEqual(['turn of /read?a over', 'sent /read?a']);
    });

    it('replies made in one turn leave one after the other, errors too, each with its own answer', async () => {
      const [a, b, c] = await Promise.all([
        app.inject({ method: 'GET', url: '/read?a' }),
        app.inject({ method: 'GET', url: '/read?b' }),
        app.inject({ method: 'GET', url: '/fails' }),
      ]);
      expect([a.statusCode, b.statusCode, c.statusCode]).toEqual([200, 200, 418]);
      expect(a.json()).toEqual({ ok: true });
      const sent = events.filter((e) => e.startsWith('sent'));
      expect(sent).toHaveLength(3);
      // Both handlers' turns were over before the first reply left, and nothing came between the replies.
      const first = events.findIndex((e) => e.startsWith('sent'));
      expect(events.slice(first)).toEqual(sent);
      expect(events.slice(0, first).sort()).toEqual(['turn of /read?a over', 'turn of /read?b over']);
    });

    it('a reply that fails to go out is logged, and the other replies of its turn still leave', async () => {
      const broken = app.inject({ method: 'GET', url: '/read?broken' });
      const [a, b] = await Promise.all([app.inject({ method: 'GET', url: '/read?a' }), app.inject({ method: 'GET', url: '/read?b' })]);
      expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
      expect(events.filter((e) => e.startsWith('sent'))).toEqual(['sent /read?a', 'sent /read?b']);
      expect(logs.join('')).toContain('the socket is gone');
      void broken.catch(() => {});
    });
  });

  /** A child process running TypeScript from src/ (tsx), given the database file; its stdout. */
  function child(script: string, args: string[] = [], onLine?: (line: string) => void) {
    return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve, reject) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, file, ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
        timeout: CHILD_TIMEOUT_MS,
      });
      let stdout = '';
      proc.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (onLine) for (const line of chunk.toString().split('\n').filter(Boolean)) onLine(line);
      });
      proc.on('error', reject);
      proc.on('close', (code, signal) => resolve({ code, signal, stdout }));
    });
  }

  it('a process that dies before the commit loses only the requests it had not answered', async () => {
    const script = `
      const { openDatabase } = await import(${JSON.stringify(CONNECTION)});
      const { groupCommits } = await import(${JSON.stringify(GROUP_COMMIT)});
      const db = openDatabase(process.argv[1]);
      const commits = groupCommits(db.$client);
      const insert = (name) => db.$client.transaction(() => db.$client.prepare('INSERT INTO t (name) VALUES (?)').run(name))();
      insert('answered');
      await commits.settled();
      process.stdout.write('answered\\n');
      insert('never-answered');
      // Dies in the same turn, before the group's commit and before any answer.
      process.kill(process.pid, 'SIGKILL');
    `;
    const result = await child(script);
    expect(result.signal).toBe('SIGKILL');
    expect(result.stdout).toBe('answered\n');
    expect(names()).toEqual(['answered']);
  });

  it('another process writing the same file is serialised with the groups: every write of both is kept', async () => {
    const ROWS = 150;
    // The other process: plain better-sqlite3, one transaction per row, waiting on the lock as any writer does.
    const script = `
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(process.argv[1]);
      db.pragma('busy_timeout = 5000');
      const insert = db.prepare('INSERT INTO t (name) VALUES (?)');
      process.stdout.write('ready\\n');
      for (let i = 0; i < ${ROWS}; i++) db.transaction(() => insert.run('child-' + i))();
      db.close();
      process.stdout.write('done\\n');
    `;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const running = child(script, [], (line) => line === 'ready' && ready());
    await started;
    let failures = 0;
    for (let i = 0; i < ROWS; i++) {
      insert(`parent-${i}`);
      insert(`parent-${i}-b`);
      await commits.settled()?.catch(() => failures++);
      await turn();
    }
    const result = await running;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('ready\ndone\n');
    expect(failures).toBe(0);
    expect(other.prepare("SELECT count(*) FROM t WHERE name LIKE 'child-%'").pluck().get()).toBe(ROWS);
    expect(other.prepare("SELECT count(*) FROM t WHERE name LIKE 'parent-%'").pluck().get()).toBe(2 * ROWS);
  });
});

describe('group commit in the server (app.ts)', () => {
  let t: TestApp, token: string;
  useAdminApp((app, adminToken) => ([t, token] = [app, adminToken]));

  it('01§4.3 concurrent site creates share commits; every one answered 201 is stored, with its audit entry', async () => {
    const partner = await t.call('POST', '/api/v1/orgs/partners', { token, body: { name: 'Group MSP', slug: 'group' } });
    const org = await t.call('POST', '/api/v1/orgs/organizations', { token, body: { name: 'G', slug: 'g', partnerId: partner.body.id } });
    const before = t.commits.committed;
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) => t.call('POST', '/api/v1/orgs/sites', { token, body: { orgId: org.body.id, name: `S${i}` } })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(t.commits.committed - before).toBeLessThan(12);
    const stored = new Database(t.db.$client.name, { readonly: true });
    try {
      const ids = created.map((r) => r.body.id as string);
      const sites = stored.prepare('SELECT count(*) FROM sites WHERE id IN (SELECT value FROM json_each(?))').pluck().get(JSON.stringify(ids));
      const audits = stored
        .prepare("SELECT count(*) FROM audit_logs WHERE action = 'site.create' AND resource_id IN (SELECT value FROM json_each(?))")
        .pluck()
        .get(JSON.stringify(ids));
      expect([sites, audits]).toEqual([12, 12]);
    } finally {
      stored.close();
    }
  });
});
