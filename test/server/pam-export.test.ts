import { randomUUID } from 'node:crypto';
import { and, eq, gte, lt } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'csv-parse/sync';
import { ELEVATION_EXPORT_COLUMNS } from '../../src/contract/pam.js';
import {
  auditLogs,
  elevationAuditEvents,
  elevationRequests,
} from '../../src/server/db/schema/index.js';
import { decodeCursor, encodeCursor } from '../../src/server/modules/pam/audit-export.js';
import { API, UAC, ingest, pendingRequest, seedPamWorld, type PamWorld } from '../helpers/pam.js';
import { ROLES, seedOrgRole, seedUser } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const EXPORT = `${API}/pam/elevation-audit/export`;
const T0 = Date.parse('2025-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

interface Page {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  rows: Record<string, unknown>[];
}

/** RFC 4180 records of a CSV text (quoted fields, doubled quotes, newlines inside quotes). */
const parseCsv = (text: string): string[][] => parse(text, { relax_column_count: true });

describe('PAM elevation audit export (01 §4.9 "Audit export", 04 "Audit export")', () => {
  let t: TestApp;
  let w: PamWorld;
  let token: string;

  const get = async (query: Record<string, string | number | undefined>, auth = token): Promise<Page> => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    const res = await t.app.inject({
      method: 'GET',
      url: `${EXPORT}?${qs.toString()}`,
      headers: { authorization: `Bearer ${auth}` },
    });
    const format = query.format ?? 'csv';
    let rows: Record<string, unknown>[] = [];
    if (res.statusCode === 200) {
      if (format === 'jsonl')
        rows = res.body
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>);
      else {
        const [header, ...records] = parseCsv(res.body);
        expect(header).toEqual([...ELEVATION_EXPORT_COLUMNS]);
        rows = records.map((r) => Object.fromEntries(ELEVATION_EXPORT_COLUMNS.map((c, i) => [c, r[i]])));
      }
    }
    return { status: res.statusCode, headers: res.headers, text: res.body, rows };
  };

  /** Requests of organization A1 on its three devices, written directly (the export reads them joined). */
  const seedRequests = (count: number): string[] => {
    const ids: string[] = [];
    const devs = [w.devA1a, w.devA1b, w.devA1none];
    t.db.$client.transaction(() => {
      for (let i = 0; i < count; i++) {
        const dev = devs[i % devs.length];
        if (!dev) throw new Error('no device');
        const row = t.db
          .insert(elevationRequests)
          .values({
            orgId: w.orgA1.id,
            deviceId: dev.deviceId,
            siteId: dev.siteId,
            flowType: 'uac_intercept',
            status: 'pending',
            subjectUsername: `user${i}`,
            targetExecutablePath: `C:\\apps\\tool${i}.exe`,
            observedAt: iso(T0 - 20 * 86_400_000),
            requestedAt: iso(T0 - 20 * 86_400_000),
          })
          .returning({ id: elevationRequests.id })
          .get();
        ids.push(row.id);
      }
    })();
    return ids;
  };

  /** Trail rows written straight into the table, fast, in one transaction. */
  const insertEvents = (
    requestIds: string[],
    count: number,
    createdAtOf: (i: number) => string,
    orgId = w.orgA1.id,
  ) => {
    const statement = t.db.$client.prepare(
      `INSERT INTO elevation_audit_events (id, org_id, elevation_request_id, event_type, actor, actor_user_id, occurred_at, created_at, details)
       VALUES (?, ?, ?, ?, 'system', NULL, ?, ?, ?)`,
    );
    const types = ['requested', 'approved', 'session_started', 'command_executed', 'session_ended'];
    t.db.$client.transaction(() => {
      for (let i = 0; i < count; i++) {
        const createdAt = createdAtOf(i);
        statement.run(
          randomUUID(),
          orgId,
          requestIds[i % requestIds.length],
          types[i % types.length],
          createdAt,
          createdAt,
          JSON.stringify({ n: i }),
        );
      }
    })();
  };

  const expectedIds = (from: string, to: string) =>
    t.db
      .select({ id: elevationAuditEvents.id })
      .from(elevationAuditEvents)
      .where(
        and(
          eq(elevationAuditEvents.orgId, w.orgA1.id),
          gte(elevationAuditEvents.createdAt, from),
          lt(elevationAuditEvents.createdAt, to),
        ),
      )
      .orderBy(elevationAuditEvents.createdAt, elevationAuditEvents.id)
      .all()
      .map((r) => r.id);

  afterEach(async () => {
    vi.useRealTimers();
    await t.close();
  });

  describe('with the default settle time (300 s) and a controlled clock', () => {
    beforeEach(async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(T0);
      t = await createTestApp({ SVC_ACCESS_TOKEN_TTL_SECONDS: '86400' });
      w = await seedPamWorld(t);
      token = w.tokens.system;
    });

    it('04 Audit export: 25,000 events paged by 1000 and by 7 give the same rows in the same order, none lost or doubled, with rows recorded while paging', async () => {
      const requestIds = seedRequests(60);
      // Four rows share each recorded time: the id breaks the tie.
      insertEvents(requestIds, 25_000, (i) => iso(T0 - 10 * 86_400_000 + Math.floor(i / 4) * 30_000));
      const from = iso(T0 - 11 * 86_400_000);
      const to = iso(T0 + 3_600_000);
      let live = 0;

      const run = async (limit: number, onPage: (pageNo: number) => void) => {
        const ids: string[] = [];
        let cursor: string | undefined;
        let pageNo = 0;
        for (;;) {
          const page = await get({ orgId: w.orgA1.id, from, to, limit, format: 'jsonl', cursor });
          expect(page.status, page.text).toBe(200);
          expect(page.headers['x-export-schema-version']).toBe('1');
          expect(page.headers['cache-control']).toBe('no-store');
          expect(Number(page.headers['x-row-count'])).toBe(page.rows.length);
          expect(page.rows.length).toBeLessThanOrEqual(limit);
          const settled = String(page.headers['x-settled-through']);
          expect(settled).toBe(iso(Date.now() - 300_000));
          for (const row of page.rows) {
            expect(String(row.created_at) < settled).toBe(true);
            ids.push(String(row.id));
          }
          const last = page.rows.at(-1);
          if (last)
            expect(page.headers['x-next-cursor']).toBe(
              encodeCursor({ createdAt: String(last.created_at), id: String(last.id) }),
            );
          else expect(page.headers['x-next-cursor']).toBe(cursor ?? '');
          cursor = String(page.headers['x-next-cursor']);
          const hasMore = page.headers['x-has-more'] === 'true';
          const complete = page.headers['x-window-complete'] === 'true';
          if (complete) {
            expect(hasMore).toBe(false);
            break;
          }
          if (!hasMore) {
            // Everything settled so far is out, but the window's end is not settled yet: wait, then go on.
            expect(to > settled).toBe(true);
            vi.setSystemTime(Math.max(Date.now() + 60_000, Date.parse(to) + 300_001));
          }
          onPage(pageNo++);
          vi.setSystemTime(Date.now() + 1000);
        }
        return ids;
      };

      // Run 1: pages of 1000; every third page, new rows are recorded "now" (inside the window, withheld until
      // they settle).
      const first = await run(1000, (pageNo) => {
        if (pageNo % 3 === 0 && Date.now() < Date.parse(to)) {
          insertEvents(requestIds, 3, () => iso(Date.now()));
          live += 3;
        }
      });
      expect(live).toBeGreaterThan(0);
      const expected = expectedIds(from, to);
      expect(expected).toHaveLength(25_000 + live);
      expect(new Set(first).size).toBe(first.length);
      expect(first).toEqual(expected);

      // Run 2: pages of 7, after the window has settled; rows recorded meanwhile fall after the window.
      const second = await run(7, (pageNo) => {
        if (pageNo % 500 === 0) insertEvents(requestIds, 2, () => iso(Date.now()));
      });
      expect(second).toEqual(expected);
      // Each page was itself audited.
      const audited = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'pam.elevation_audit.export')).all();
      expect(audited.length).toBeGreaterThan(Math.ceil(25_000 / 7));
      expect(audited[0]).toMatchObject({ orgId: w.orgA1.id, resourceType: 'elevation_audit' });
    }, 180_000);

    it('04 Audit export: rows are withheld until settled (X-Settled-Through = now − 300 s); the window is complete only once its end has settled', async () => {
      const [requestId = ''] = seedRequests(1);
      insertEvents([requestId], 1, () => iso(T0 - 3_600_000));
      insertEvents([requestId], 1, () => iso(T0 - 1000));
      const from = iso(T0 - 86_400_000);
      const query = { orgId: w.orgA1.id, from, to: iso(T0), format: 'jsonl' };
      const first = await get(query);
      expect(first.status).toBe(200);
      expect(first.rows).toHaveLength(1);
      expect(first.headers['x-settled-through']).toBe(iso(T0 - 300_000));
      expect(first.headers['x-has-more']).toBe('false');
      expect(first.headers['x-window-complete']).toBe('false');

      vi.setSystemTime(T0 + 300_000);
      const second = await get({ ...query, cursor: String(first.headers['x-next-cursor']) });
      expect(second.rows).toHaveLength(1);
      expect(second.headers['x-window-complete']).toBe('true');
      const empty = await get({ ...query, cursor: String(second.headers['x-next-cursor']) });
      expect(empty.status).toBe(200);
      expect(empty.rows).toEqual([]);
      expect(empty.text).toBe('');
      expect(empty.headers['x-row-count']).toBe('0');
      expect(empty.headers['x-next-cursor']).toBe(second.headers['x-next-cursor']);
      expect(empty.headers['x-window-complete']).toBe('true');
      // A window with nothing in it at all: 200, an empty cursor, complete once settled.
      const none = await get({ orgId: w.orgA2.id, from, to: iso(T0), format: 'csv' });
      expect(none.status).toBe(200);
      expect(none.text).toBe(`${ELEVATION_EXPORT_COLUMNS.join(',')}\n`);
      expect(none.headers['x-next-cursor']).toBe('');
      expect(none.headers['x-window-complete']).toBe('true');
    });

    it('04 Audit export: the watermark is capped at the start of a write still in progress', async () => {
      const started = iso(T0 - 400_000);
      const token0 = t.services.pam.trail.inFlight.begin(started);
      try {
        const page = await get({ orgId: w.orgA1.id, from: iso(T0 - 86_400_000), to: iso(T0), format: 'jsonl' });
        expect(page.headers['x-settled-through']).toBe(started);
      } finally {
        t.services.pam.trail.inFlight.end(token0);
      }
      const after = await get({ orgId: w.orgA1.id, from: iso(T0 - 86_400_000), to: iso(T0), format: 'jsonl' });
      expect(after.headers['x-settled-through']).toBe(iso(T0 - 300_000));
    });
  });

  describe('with a settle time of 0 (SVC_EXPORT_SETTLE_SECONDS)', () => {
    beforeEach(async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(T0);
      t = await createTestApp({ SVC_EXPORT_SETTLE_SECONDS: '0', SVC_ACCESS_TOKEN_TTL_SECONDS: '86400' });
      w = await seedPamWorld(t);
      token = w.tokens.system;
    });
    const window = () => ({ orgId: w.orgA1.id, from: iso(T0 - 86_400_000), to: iso(T0 + 86_400_000) });
    const tick = () => vi.setSystemTime(Date.now() + 1000);

    it('04 Audit export CSV: RFC 4180, the columns in order, a header on every page, formulas neutralised, details as JSON, \\n line ends, joined to the current request state', async () => {
      const id = await pendingRequest(t, w.devA1a, {
        ...UAC,
        subject_username: '=HYPERLINK("http://x")',
        reason: 'line one\nline "two", with comma',
      });
      tick();
      const res = await t.call('POST', `${API}/pam/elevation-requests/${id}/respond`, {
        token: w.tokens.orgUser,
        body: { decision: 'approve', reason: '+1 from me' },
      });
      expect(res.status).toBe(200);
      tick();
      const page = await get({ ...window(), limit: 1 });
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/csv/);
      expect(page.text.includes('\r\n')).toBe(false);
      expect(page.text.split('\n')[0]).toBe(ELEVATION_EXPORT_COLUMNS.join(','));
      expect(page.rows).toHaveLength(1);
      const row = page.rows[0] ?? {};
      expect(row).toMatchObject({
        org_id: w.orgA1.id,
        elevation_request_id: id,
        event_type: 'requested',
        actor: 'end_user',
        actor_user_id: '',
        request_device_id: w.devA1a.deviceId,
        request_site_id: w.siteA1a.id,
        request_flow_type: 'uac_intercept',
        request_subject_username: `'=HYPERLINK("http://x")`,
        request_reason: 'line one\nline "two", with comma',
        // The current state of the request, not the state when the event was recorded.
        request_status: 'approved',
        request_revision: '2',
        request_approved_by_user_id: w.users.orgUser.id,
        request_decided_assurance_level: 'session',
        request_decided_via: 'api',
      });
      expect(JSON.parse(String(row.details))).toMatchObject({ flowType: 'uac_intercept' });
      const next = await get({ ...window(), limit: 1, cursor: String(page.headers['x-next-cursor']) });
      expect(next.text.split('\n')[0]).toBe(ELEVATION_EXPORT_COLUMNS.join(','));
      expect(next.rows[0]).toMatchObject({
        event_type: 'approved',
        actor: 'technician',
        actor_user_id: w.users.orgUser.id,
      });
      expect(JSON.parse(String(next.rows[0]?.details))).toMatchObject({ reason: '+1 from me' });
    });

    it('04 Audit export JSONL: one object per line with the same keys in the same order; details as an object', async () => {
      await pendingRequest(t, w.devA1a);
      tick();
      const page = await get({ ...window(), format: 'jsonl' });
      expect(page.headers['content-type']).toMatch(/^application\/x-ndjson/);
      expect(page.text.endsWith('\n')).toBe(true);
      expect(Object.keys(page.rows[0] ?? {})).toEqual([...ELEVATION_EXPORT_COLUMNS]);
      expect(page.rows[0]).toMatchObject({
        event_type: 'requested',
        request_revision: 1,
        request_risk_tier: null,
        details: expect.objectContaining({ flowType: 'uac_intercept' }),
      });
    });

    it('04 Audit export filters: siteId, deviceId, elevationRequestId, eventType; site-restricted users see their sites only', async () => {
      const a = await pendingRequest(t, w.devA1a);
      const b = await pendingRequest(t, w.devA1b);
      const c = await pendingRequest(t, w.devA1none);
      tick();
      await t.call('POST', `${API}/pam/elevation-requests/${a}/respond`, {
        token: w.tokens.orgUser,
        body: { decision: 'deny' },
      });
      await pendingRequest(t, w.devA2);
      tick();
      const ids = async (query: Record<string, string>, auth = token) => {
        const page = await get({ ...window(), format: 'jsonl', ...query }, auth);
        expect(page.status, page.text).toBe(200);
        return page.rows.map((r) => `${String(r.elevation_request_id)}:${String(r.event_type)}`);
      };
      expect(await ids({})).toHaveLength(4);
      expect(await ids({ siteId: w.siteA1a.id })).toEqual([`${a}:requested`, `${a}:denied`]);
      expect(await ids({ deviceId: w.devA1b.deviceId })).toEqual([`${b}:requested`]);
      expect(await ids({ elevationRequestId: c })).toEqual([`${c}:requested`]);
      expect(await ids({ eventType: 'denied' })).toEqual([`${a}:denied`]);
      const exporterRole = seedOrgRole(t, w.orgA1.id, ['devices:read', 'audit:export'], 'Exporter');
      const siteExporter = await seedUser(t, {
        email: 'site-exporter@a1.test',
        org: { orgId: w.orgA1.id, roleId: exporterRole, siteIds: [w.siteA1b.id] },
        login: 'mint',
        mfa: true,
      });
      expect(await ids({}, siteExporter.token)).toEqual([`${b}:requested`]);
      expect((await get({ ...window(), siteId: w.siteA1a.id }, siteExporter.token)).status).toBe(403);
    });

    it('04 Audit export parameters: every bound and error', async () => {
      const w0 = window();
      const cases: [Record<string, string | number | undefined>, number][] = [
        [{ ...w0, from: undefined }, 400],
        [{ ...w0, to: undefined }, 400],
        [{ ...w0, from: '2025-02-01T00:00:00' }, 400],
        [{ ...w0, from: '2025-02-01' }, 400],
        [{ ...w0, to: 'tomorrow' }, 400],
        [{ ...w0, from: w0.to }, 400],
        [{ ...w0, from: iso(T0 + 2 * 86_400_000) }, 400],
        [{ ...w0, from: iso(T0 - 367 * 86_400_000), to: iso(T0) }, 400],
        [{ ...w0, from: iso(T0 - 366 * 86_400_000), to: iso(T0) }, 200],
        [{ ...w0, from: '2025-02-28T14:00:00+02:00' }, 200],
        [{ ...w0, orgId: undefined }, 400],
        [{ ...w0, orgId: 'nope' }, 400],
        [{ ...w0, format: 'xml' }, 400],
        [{ ...w0, format: 'jsonl' }, 200],
        [{ ...w0, eventType: 'exploded' }, 400],
        [{ ...w0, eventType: 'evidence_attached' }, 200],
        [{ ...w0, limit: 0 }, 400],
        [{ ...w0, limit: 1001 }, 400],
        [{ ...w0, limit: 'ten' }, 400],
        [{ ...w0, limit: 1000 }, 200],
        [{ ...w0, limit: 1 }, 200],
        [{ ...w0, siteId: w.siteA2a.id }, 400],
        [{ ...w0, deviceId: 'x' }, 400],
        [{ ...w0, elevationRequestId: 'x' }, 400],
      ];
      for (const [query, status] of cases) {
        const res = await get(query);
        expect({ query, status: res.status }).toEqual({ query, status });
      }
    });

    it('04 Audit export cursor: opaque base64url of "<recorded time>|<row id>"; malformed or tampered → 400 `Invalid cursor`', async () => {
      await pendingRequest(t, w.devA1a);
      await pendingRequest(t, w.devA1a);
      tick();
      const page = await get({ ...window(), limit: 1, format: 'jsonl' });
      const cursor = String(page.headers['x-next-cursor']);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(cursor, 'base64url').toString()).toBe(
        `${String(page.rows[0]?.created_at)}|${String(page.rows[0]?.id)}`,
      );
      expect(decodeCursor(cursor)).toEqual({ createdAt: page.rows[0]?.created_at, id: page.rows[0]?.id });
      const b64 = (s: string) => Buffer.from(s).toString('base64url');
      const bad = [
        'not a cursor!',
        b64('garbage'),
        b64(`${String(page.rows[0]?.created_at)}|not-a-uuid`),
        b64(`yesterday|${String(page.rows[0]?.id)}`),
        b64(`2025-02-30T00:00:00.000Z|${String(page.rows[0]?.id)}`),
        b64(`${String(page.rows[0]?.created_at)}|${String(page.rows[0]?.id)}|x`),
        `${cursor}A`,
        cursor.slice(0, -2),
        `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`,
        `${cursor}=`,
      ];
      for (const c of bad) {
        const res = await get({ ...window(), cursor: c });
        expect({
          c,
          status: res.status,
          body: res.status === 400 ? (JSON.parse(res.text) as { error: string }).error : res.text,
        }).toEqual({ c, status: 400, body: 'Invalid cursor' });
      }
      const next = await get({ ...window(), limit: 1, format: 'jsonl', cursor });
      expect(next.status).toBe(200);
      expect(next.rows[0]?.id).not.toBe(page.rows[0]?.id);
    });

    it('04 Audit export cursor: a cursor from before `from` does not reach out of the window', async () => {
      for (let i = 0; i < 3; i++) {
        await pendingRequest(t, w.devA1a);
        tick();
      }
      const all = await get({ ...window(), format: 'jsonl' });
      const times = [...new Set(all.rows.map((row) => String(row.created_at)))];
      expect(times.length).toBeGreaterThanOrEqual(3);
      const first = await get({ ...window(), limit: 1, format: 'jsonl' });
      const cursor = String(first.headers['x-next-cursor']);
      const from = times[2] ?? '';
      const page = await get({ ...window(), from, format: 'jsonl', cursor });
      expect(page.status).toBe(200);
      expect(page.rows.map((row) => row.id)).toEqual(
        all.rows.filter((row) => String(row.created_at) >= from).map((row) => row.id),
      );
    });

    it('04 Audit export access: user sessions only, devices:read and audit:export, MFA, the organization in reach', async () => {
      const w0 = window();
      const noMfa = await seedUser(t, {
        email: 'nomfa@a.test',
        partner: { partnerId: w.partnerA.id, orgAccess: 'all' },
        login: 'mint',
        mfa: false,
      });
      const mfa = await get(w0, noMfa.token);
      expect(mfa.status).toBe(403);
      expect(JSON.parse(mfa.text).code).toBe('MFA_REQUIRED');
      // Org Admin has no audit:export; a role with audit:export but not devices:read is refused too.
      expect((await get({ from: w0.from, to: w0.to }, w.tokens.orgUser)).status).toBe(403);
      const exportOnly = seedOrgRole(t, w.orgA1.id, ['audit:export'], 'Export only');
      const exporter = await seedUser(t, {
        email: 'exp@a1.test',
        org: { orgId: w.orgA1.id, roleId: exportOnly },
        login: 'mint',
        mfa: true,
      });
      expect((await get({ from: w0.from, to: w0.to }, exporter.token)).status).toBe(403);
      const viewer = await seedUser(t, {
        email: 'viewer@a.test',
        partner: { partnerId: w.partnerA.id, roleId: ROLES.partnerViewer, orgAccess: 'all' },
        login: 'mint',
        mfa: true,
      });
      expect((await get(w0, viewer.token)).status).toBe(403);
      // Partner callers must name a reachable organization; organization callers export their own.
      expect((await get({ from: w0.from, to: w0.to }, w.tokens.aAdmin)).status).toBe(400);
      expect((await get(w0, w.tokens.aAdmin)).status).toBe(200);
      expect((await get(w0, w.tokens.bAdmin)).status).toBe(403);
      expect((await get({ ...w0, orgId: w.orgA2.id }, w.tokens.aSelAdmin)).status).toBe(403);
      const role = seedOrgRole(t, w.orgA1.id, ['devices:read', 'audit:export'], 'Auditor');
      const auditor = await seedUser(t, {
        email: 'auditor@a1.test',
        org: { orgId: w.orgA1.id, roleId: role },
        login: 'mint',
        mfa: true,
      });
      expect((await get({ from: w0.from, to: w0.to }, auditor.token)).status).toBe(200);
      expect((await get({ ...w0, orgId: w.orgA2.id }, auditor.token)).status).toBe(403);
      // API keys are refused even with every scope.
      const key = await t.call('POST', `${API}/api-keys`, {
        token,
        body: { orgId: w.orgA1.id, name: 'k', scopes: ['*'] },
      });
      expect(key.status, key.text).toBe(201);
      const withKey = await t.app.inject({
        method: 'GET',
        url: `${EXPORT}?from=${encodeURIComponent(w0.from)}&to=${encodeURIComponent(w0.to)}&orgId=${w.orgA1.id}`,
        headers: { 'x-api-key': key.body.key },
      });
      expect(withKey.statusCode).toBe(403);
    });

    it('04 Audit export: an ingested request is exported once recorded (settle 0), and each page is audited', async () => {
      const res = await ingest(t, w.devA1a, UAC);
      tick();
      const page = await get({ ...window(), format: 'jsonl' });
      expect(page.rows.map((r) => r.elevation_request_id)).toEqual([res.body.id]);
      const audited = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'pam.elevation_audit.export')).all();
      expect(audited).toHaveLength(1);
      expect(audited[0]?.details).toMatchObject({ rowCount: 1, format: 'jsonl' });
    });
  });
});
