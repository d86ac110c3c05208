import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import {
  auditLogs,
  devices,
  elevationAuditEvents,
  elevationRequests,
  jobs,
  organizations,
  outboxEvents,
  pamWebauthnChallenges,
  users,
} from '../../src/server/db/schema/index.js';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import {
  AI,
  API,
  H1,
  SoftAuthenticator,
  UAC,
  createRule,
  ingest,
  pendingRequest,
  usePamWorld,
  sha,
  type PamWorld,
} from '../helpers/pam.js';
import { ROLES, SEED_PASSWORD, seedUser } from '../helpers/seed.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, totpFor, type TestApp } from '../helpers/server.js';

const NO_HASH = Object.fromEntries(Object.entries(UAC).filter(([k]) => k !== 'target_executable_hash'));
const CRITICAL = { ...AI, tool_name: 'custom_admin_tool', risk_tier: 4, action_digest: sha('critical') };

/** A decision made by a person through the API with a plain session (01 §3). */
const DECIDED_BY_HUMAN = { decisionSource: 'human', decidedAssuranceLevel: 'session', decidedVia: 'api' } as const;

describe('PAM elevation requests (01 §2.11, §3, §4.9; 04 wire notes "PAM")', () => {
  let t: TestApp;
  let w: PamWorld;
  let sys: string;
  const respond = (id: string, body: Record<string, unknown>, token = w.tokens.orgUser) =>
    t.call('POST', `${API}/pam/elevation-requests/${id}/respond`, { token, body });
  const jit = (token: string, body: Record<string, unknown>) => t.call('POST', `${API}/pam/elevation-requests`, { token, body });
  const revoke = (id: string, body: Record<string, unknown>, token = w.tokens.orgUser) =>
    t.call('POST', `${API}/pam/elevation-requests/${id}/revoke`, { token, body });
  const getRequest = async (id: string, token = sys) =>
    (await t.call('GET', `${API}/pam/elevation-requests/${id}`, { token })).body.request;
  const trail = (id: string) =>
    t.db
      .select()
      .from(elevationAuditEvents)
      .where(eq(elevationAuditEvents.elevationRequestId, id))
      .orderBy(elevationAuditEvents.createdAt)
      .all();
  const outbox = (type: string) => t.db.select().from(outboxEvents).where(eq(outboxEvents.type, type)).all();
  const audits = (action: string) => t.db.select().from(auditLogs).where(eq(auditLogs.action, action)).all();
  /** A new server process on the same data directory. */
  const restart = () =>
    buildApp(
      loadConfig({
        SVC_DATA_DIR: t.dataDir,
        SVC_ADMIN_EMAIL: ADMIN_EMAIL,
        SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
        SVC_LOG_LEVEL: 'silent',
      }),
      { logger: false, announce: () => undefined },
    );

  usePamWorld((app, world) => ([t, w, sys] = [app, world, world.tokens.system]));

  // ---- agent ingest ----

  it('04 PAM agent ingest: 201 {id, status:"pending"}; the fields are stored; trail "requested" and an audit entry in the same write', async () => {
    const res = await ingest(t, w.devA1a, {
      ...UAC,
      target_publisher: 'Vendor',
      reason: 'install the tool',
      execution_id: 'exec-1',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), status: 'pending', expiresAt: null });
    const request = await getRequest(res.body.id);
    expect(request).toMatchObject({
      orgId: w.orgA1.id,
      deviceId: w.devA1a.deviceId,
      deviceHostname: 'ws-a1a',
      siteId: w.siteA1a.id,
      siteName: 'A1 HQ',
      flowType: 'uac_intercept',
      status: 'pending',
      enforcementStatus: null,
      subjectUsername: 'CORP\\alice',
      targetExecutablePath: 'C:\\Program Files\\Vendor\\app.exe',
      targetExecutableHash: H1,
      targetExecutableSigner: 'Vendor Inc',
      targetPublisher: 'Vendor',
      parentImage: 'C:\\Windows\\explorer.exe',
      reason: 'install the tool',
      executionId: 'exec-1',
      observedAt: '2024-06-05T12:00:00.000Z',
      requestedAt: expect.any(String),
      pamRuleId: null,
      decisionSource: null,
      expiresAt: null,
      revision: 1,
      toolName: null,
      riskTier: null,
    });
    const events = trail(res.body.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      eventType: 'requested',
      actor: 'end_user',
      actorUserId: null,
      occurredAt: '2024-06-05T12:00:00.000Z',
      orgId: w.orgA1.id,
    });
    const audit = audits('pam.elevation_request.create');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: 'agent', resourceId: res.body.id, orgId: w.orgA1.id });
  });

  it('04 PAM agent ingest: AI tool actions carry tool_name, risk_tier and action_digest', async () => {
    const res = await ingest(t, w.devA1a, AI);
    expect(res.status).toBe(201);
    const request = await getRequest(res.body.id);
    expect(request).toMatchObject({
      flowType: 'ai_tool_action',
      toolName: 'execute_command',
      riskTier: 3,
      actionDigest: AI.action_digest,
    });
    expect(trail(res.body.id)[0]).toMatchObject({ eventType: 'requested', actor: 'system' });
  });

  it('04 PAM agent ingest: a body over 32 KB is 413; the route needs the agent token of the path', async () => {
    const big = await ingest(t, w.devA1a, {
      ...UAC,
      subject_groups: Array.from({ length: 200 }, (_, i) => `group-${i}-${'x'.repeat(160)}`),
    });
    expect(big.status).toBe(413);
    const fits = await ingest(t, w.devA1a, {
      ...UAC,
      subject_groups: Array.from({ length: 100 }, (_, i) => `group-${i}-${'x'.repeat(200)}`),
    });
    expect(fits.status).toBe(201);
    expect((await t.call('POST', `${API}/agents/${w.devA1a.agentId}/elevation-requests`, { body: UAC })).status).toBe(
      401,
    );
    expect(
      (
        await t.call('POST', `${API}/agents/${w.devA1a.agentId}/elevation-requests`, {
          token: w.devA1b.token,
          body: UAC,
        })
      ).status,
    ).toBe(403);
    expect(
      (await t.call('POST', `${API}/agents/${w.devA1a.agentId}/elevation-requests`, { token: sys, body: UAC })).status,
    ).toBe(401);
    t.db.update(devices).set({ status: 'decommissioned' }).where(eq(devices.id, w.devA1b.deviceId)).run();
    expect((await ingest(t, w.devA1b, UAC)).status).toBe(401);
  });

  it('04 PAM agent ingest validates its body', async () => {
    const cases: Record<string, unknown>[] = [
      { ...UAC, subject_username: undefined },
      { ...UAC, target_executable_path: undefined },
      { ...UAC, target_executable_hash: 'nothex' },
      { ...UAC, observed_at: '2024-06-05T12:00:00' },
      { ...UAC, observed_at: new Date(Date.now() + 3_600_000).toISOString() },
      { ...UAC, flow_type: 'uac_intercept', tool_name: 'execute_command' },
      { ...UAC, flow_type: 'tech_jit_admin' },
      { ...AI, risk_tier: undefined },
      { ...AI, risk_tier: 5 },
      { ...AI, action_digest: undefined },
      { ...UAC, command_line: 'x'.repeat(8193) },
    ];
    for (const body of cases) {
      const res = await ingest(t, w.devA1a, body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect(t.db.select().from(elevationRequests).all()).toEqual([]);
  });

  it('04 PAM verdicts: auto_approve → auto_approved with the rule duration, trail and elevation.approved', async () => {
    const rule = await createRule(t, sys, {
      orgId: w.orgA1.id,
      name: 'vendor',
      verdict: 'auto_approve',
      matchHash: H1,
      approvalDurationMinutes: 30,
    });
    const before = Date.now();
    const res = await ingest(t, w.devA1a, UAC);
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('auto_approved');
    const minutes = (Date.parse(res.body.expiresAt) - before) / 60_000;
    expect(minutes).toBeGreaterThan(29.9);
    expect(minutes).toBeLessThan(30.1);
    expect(await getRequest(res.body.id)).toMatchObject({
      status: 'auto_approved',
      enforcementStatus: 'pending_dispatch',
      decisionSource: 'pam_rule',
      decidedAssuranceLevel: 'policy',
      decidedVia: 'policy',
      pamRuleId: rule.id,
      pamRuleName: 'vendor',
      approvedAt: expect.any(String),
    });
    expect(trail(res.body.id).map((e) => [e.eventType, e.actor])).toEqual([
      ['requested', 'end_user'],
      ['auto_approved', 'policy'],
    ]);
    const events = outbox('elevation.approved');
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({
      elevationRequestId: res.body.id,
      status: 'auto_approved',
      decisionSource: 'pam_rule',
      pamRuleId: rule.id,
      orgId: w.orgA1.id,
    });

    // Without a rule duration: 15 minutes.
    await t.call('PATCH', `${API}/pam/rules/${rule.id}`, { token: sys, body: { approvalDurationMinutes: null } });
    const second = await ingest(t, w.devA1a, UAC);
    expect(Math.round((Date.parse(second.body.expiresAt) - Date.now()) / 60_000)).toBe(15);
  });

  it('04 PAM verdicts: auto_deny → denied with elevation.denied; require_approval → pending with the rule recorded', async () => {
    const deny = await createRule(t, sys, { orgId: w.orgA1.id, name: 'no mmc', verdict: 'auto_deny', matchPathGlob: '**/mmc.exe' });
    const ask = await createRule(t, sys, {
      orgId: w.orgA1.id,
      name: 'ask',
      verdict: 'require_approval',
      matchHash: H1,
    });
    const denied = await ingest(t, w.devA1a, { ...UAC, target_executable_path: 'C:\\Windows\\System32\\mmc.exe' });
    expect(denied.body).toEqual({
      id: expect.any(String),
      status: 'denied',
      expiresAt: null,
      reason: 'Denied by rule "no mmc"',
    });
    expect(await getRequest(denied.body.id)).toMatchObject({
      status: 'denied',
      decisionSource: 'pam_rule',
      pamRuleId: deny.id,
      denialReason: 'Denied by rule "no mmc"',
    });
    expect(trail(denied.body.id).map((e) => e.eventType)).toEqual(['requested', 'denied']);
    expect(outbox('elevation.denied')[0]?.payload).toMatchObject({
      elevationRequestId: denied.body.id,
      reason: 'Denied by rule "no mmc"',
    });
    const pending = await ingest(t, w.devA1a, UAC);
    expect(pending.body.status).toBe('pending');
    expect(await getRequest(pending.body.id)).toMatchObject({
      pamRuleId: ask.id,
      pamRuleName: 'ask',
      decisionSource: null,
    });
    expect(outbox('elevation.approved')).toEqual([]);
  });

  it('04 PAM verdicts: ignore → 200 {id:null, status:"ignored"} and nothing is recorded; ignore never applies to a tool action', async () => {
    await createRule(t, sys, { orgId: w.orgA1.id, name: 'quiet', verdict: 'ignore', matchUser: 'CORP\\alice' });
    const auditBefore = t.db.select().from(auditLogs).all().length;
    const res = await ingest(t, w.devA1a, UAC);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: null, status: 'ignored' });
    expect(t.db.select().from(elevationRequests).all()).toEqual([]);
    expect(t.db.select().from(elevationAuditEvents).all()).toEqual([]);
    expect(t.db.select().from(auditLogs).all()).toHaveLength(auditBefore);
    const tool = await ingest(t, w.devA1a, AI);
    expect(tool.status).toBe(201);
    expect(tool.body.status).toBe('pending');
  });

  it('01§6 a policy auto-approval of an executable without a file hash is refused at ingest: denied, refused, elevation.denied', async () => {
    await createRule(t, sys, { orgId: w.orgA1.id, name: 'alice', verdict: 'auto_approve', matchUser: 'CORP\\alice' });
    const res = await ingest(t, w.devA1a, NO_HASH);
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('denied');
    expect(res.body.reason).toMatch(/file hash/);
    expect(await getRequest(res.body.id)).toMatchObject({
      status: 'denied',
      enforcementStatus: 'refused',
      expiresAt: null,
    });
    const events = outbox('elevation.denied');
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toMatchObject({
      enforcementStatus: 'refused',
      reason: expect.stringMatching(/file hash/),
    });
    expect(outbox('elevation.approved')).toEqual([]);
    // An AI tool action has no executable to hash: its auto-approval stands.
    const tool = await ingest(t, w.devA1a, AI);
    expect(tool.body.status).toBe('auto_approved');
  });

  // ---- technicians' just-in-time requests ----

  it('01§4.9 JIT: a technician asks for admin rights on a device (devices:execute, user session): always pending', async () => {
    await createRule(t, sys, { orgId: w.orgA1.id, name: 'auto', verdict: 'auto_approve', matchUser: 'tech@a1.test' });
    const tech = await seedUser(t, {
      email: 'tech@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgTechnician },
      login: 'mint',
      mfa: false,
    });
    const res = await t.call('POST', `${API}/pam/elevation-requests`, {
      token: tech.token,
      body: { deviceId: w.devA1a.deviceId, reason: 'patch the driver', durationMinutes: 60 },
    });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.request).toMatchObject({
      flowType: 'tech_jit_admin',
      status: 'pending',
      requesterUserId: tech.id,
      subjectUserId: tech.id,
      subjectUsername: 'tech@a1.test',
      reason: 'patch the driver',
      requestedDurationMinutes: 60,
      deviceId: w.devA1a.deviceId,
    });
    expect(trail(res.body.request.id)[0]).toMatchObject({
      eventType: 'requested',
      actor: 'technician',
      actorUserId: tech.id,
    });
    const viewer = await seedUser(t, {
      email: 'viewer@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer },
      login: 'mint',
    });
    expect((await jit(viewer.token, { deviceId: w.devA1a.deviceId, reason: 'x' })).status).toBe(403);
    for (const body of [
      { deviceId: w.devA1a.deviceId },
      { deviceId: w.devA1a.deviceId, reason: '' },
      { deviceId: w.devA1a.deviceId, reason: 'x'.repeat(2001) },
      { deviceId: w.devA1a.deviceId, reason: 'x', durationMinutes: 0 },
      { deviceId: w.devA1a.deviceId, reason: 'x', durationMinutes: 1441 },
    ]) {
      expect((await jit(tech.token, body)).status).toBe(400);
    }
    expect((await jit(tech.token, { deviceId: w.devA2.deviceId, reason: 'x' })).status).toBe(404);
    expect((await jit(w.tokens.siteUser, { deviceId: w.devA1b.deviceId, reason: 'x' })).status).toBe(404);
  });

  // ---- reads ----

  it('01§4.9 list: {success, requests, pagination} newest first, with every filter; scoped by organization and site', async () => {
    const a = await pendingRequest(t, w.devA1a);
    const b = await pendingRequest(t, w.devA1b);
    const c = await pendingRequest(t, w.devA1a, AI);
    const d = await pendingRequest(t, w.devA2);
    const backdate = (id: string, requestedAt: string, status?: 'denied') =>
      t.db.update(elevationRequests).set({ requestedAt, ...(status ? { status } : {}) }).where(eq(elevationRequests.id, id)).run();
    backdate(a, '2024-01-01T00:00:00.000Z');
    backdate(b, '2024-01-02T00:00:00.000Z');
    backdate(c, '2024-01-03T00:00:00.000Z');
    backdate(d, '2024-01-04T00:00:00.000Z', 'denied');
    const list = async (query: string, token = sys) => {
      const res = await t.call('GET', `${API}/pam/elevation-requests${query}`, { token });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    const all = await list('');
    expect(all.success).toBe(true);
    expect(all.requests.map((r: { id: string }) => r.id)).toEqual([d, c, b, a]);
    expect(all.pagination).toEqual({ page: 1, limit: 50, total: 4 });
    expect((await list('?status=denied')).requests.map((r: { id: string }) => r.id)).toEqual([d]);
    expect((await list('?flowType=ai_tool_action')).requests.map((r: { id: string }) => r.id)).toEqual([c]);
    expect((await list(`?deviceId=${w.devA1b.deviceId}`)).requests.map((r: { id: string }) => r.id)).toEqual([b]);
    expect((await list(`?siteId=${w.siteA1a.id}`)).requests.map((r: { id: string }) => r.id)).toEqual([c, a]);
    expect(
      (await list('?from=2024-01-02T00:00:00Z&to=2024-01-04T00:00:00Z')).requests.map((r: { id: string }) => r.id),
    ).toEqual([c, b]);
    expect((await list(`?orgId=${w.orgA2.id}`)).requests.map((r: { id: string }) => r.id)).toEqual([d]);
    const paged = await list('?limit=2&page=2');
    expect(paged.requests.map((r: { id: string }) => r.id)).toEqual([b, a]);
    expect(paged.pagination).toEqual({ page: 2, limit: 2, total: 4 });
    expect((await list('?limit=500')).pagination.limit).toBe(100);
    expect((await t.call('GET', `${API}/pam/elevation-requests?status=bogus`, { token: sys })).status).toBe(400);
    expect((await t.call('GET', `${API}/pam/elevation-requests?from=yesterday`, { token: sys })).status).toBe(400);
    expect((await list('', w.tokens.orgUser)).requests).toHaveLength(3);
    expect((await list('', w.tokens.siteUser)).requests.map((r: { id: string }) => r.id)).toEqual([c, a]);
    expect((await list('', w.tokens.bAdmin)).requests).toEqual([]);
    expect((await t.call('GET', `${API}/pam/elevation-requests/${b}`, { token: w.tokens.siteUser })).status).toBe(404);
    expect((await t.call('GET', `${API}/pam/elevation-requests/${a}`, { token: w.tokens.bAdmin })).status).toBe(404);
    const tech = await seedUser(t, {
      email: 'nope@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgTechnician },
      login: 'mint',
    });
    expect((await list('', tech.token)).requests).toHaveLength(3);
  });

  it('01§4.9 /pam/active: elevations in force (approved, auto_approved, actuating) not yet expired, at most 500', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await pendingRequest(t, w.devA1a));
    const future = new Date(Date.now() + 600_000).toISOString();
    const past = new Date(Date.now() - 1000).toISOString();
    const set = (id: string | undefined, values: Partial<typeof elevationRequests.$inferInsert>) =>
      t.db
        .update(elevationRequests)
        .set(values)
        .where(eq(elevationRequests.id, id ?? ''))
        .run();
    set(ids[0], { status: 'approved', expiresAt: future });
    set(ids[1], { status: 'auto_approved', expiresAt: new Date(Date.now() + 300_000).toISOString() });
    set(ids[2], { status: 'actuating', expiresAt: future });
    set(ids[3], { status: 'approved', expiresAt: past });
    const res = await t.call('GET', `${API}/pam/active`, { token: sys });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    // Soonest expiry first, then id.
    expect(res.body.active.map((r: { id: string }) => r.id)).toEqual([ids[1], ...[ids[0], ids[2]].sort()]);
    expect((await t.call('GET', `${API}/pam/active`, { token: w.tokens.bAdmin })).body.active).toEqual([]);
  });

  // ---- respond ----

  it('01§3 approve → approved, pending_dispatch, expiresAt = now + durationMinutes (default 15); trail, audit and elevation.approved', async () => {
    const id = await pendingRequest(t, w.devA1a);
    const before = Date.now();
    const res = await respond(id, { decision: 'approve', reason: 'known installer', durationMinutes: 90 });
    expect(res.status).toBe(200);
    const approved = { status: 'approved', enforcementStatus: 'pending_dispatch', expiresAt: expect.any(String) };
    expect(res.body).toEqual({ success: true, id, ...approved, ...DECIDED_BY_HUMAN });
    const minutes = (Date.parse(res.body.expiresAt) - before) / 60_000;
    expect(minutes).toBeGreaterThan(89.9);
    expect(minutes).toBeLessThan(90.1);
    const request = await getRequest(id);
    expect(request).toMatchObject({
      status: 'approved',
      approvedByUserId: w.users.orgUser.id,
      approvedByName: 'org-admin',
      ...DECIDED_BY_HUMAN,
      revision: 2,
    });
    expect(trail(id).map((e) => [e.eventType, e.actor, e.actorUserId])).toEqual([
      ['requested', 'end_user', null],
      ['approved', 'technician', w.users.orgUser.id],
    ]);
    const audit = audits('pam.elevation_request.approve');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ result: 'success', resourceId: id, actorId: w.users.orgUser.id });
    expect(outbox('elevation.approved')[0]?.payload).toMatchObject({
      elevationRequestId: id,
      status: 'approved',
      approvedByUserId: w.users.orgUser.id,
    });

    const other = await pendingRequest(t, w.devA1a);
    const dflt = await respond(other, { decision: 'approve' });
    expect(Math.round((Date.parse(dflt.body.expiresAt) - Date.now()) / 60_000)).toBe(15);
  });

  it('01§3 deny → denied with the reason; trail, audit and elevation.denied', async () => {
    const id = await pendingRequest(t, w.devA1a);
    const res = await respond(id, { decision: 'deny', reason: 'not approved software' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, id, status: 'denied', enforcementStatus: null, expiresAt: null, ...DECIDED_BY_HUMAN });
    expect(await getRequest(id)).toMatchObject({
      status: 'denied',
      deniedByUserId: w.users.orgUser.id,
      deniedByName: 'org-admin',
      denialReason: 'not approved software',
      decisionSource: 'human',
    });
    expect(trail(id).map((e) => e.eventType)).toEqual(['requested', 'denied']);
    expect(audits('pam.elevation_request.deny')).toHaveLength(1);
    expect(outbox('elevation.denied')[0]?.payload).toMatchObject({
      elevationRequestId: id,
      reason: 'not approved software',
      deniedByUserId: w.users.orgUser.id,
    });
  });

  it('01§4.9 respond body bounds: decision required, reason ≤ 2000, durationMinutes 1-1440', async () => {
    const id = await pendingRequest(t, w.devA1a);
    for (const body of [
      {},
      { decision: 'maybe' },
      { decision: 'approve', durationMinutes: 0 },
      { decision: 'approve', durationMinutes: 1441 },
      { decision: 'approve', durationMinutes: 1.5 },
      { decision: 'deny', reason: 'x'.repeat(2001) },
      { decision: 'approve', extra: 1 },
    ]) {
      expect((await respond(id, body)).status).toBe(400);
    }
    expect((await respond(id, { decision: 'approve', durationMinutes: 1440, reason: 'x'.repeat(2000) })).status).toBe(
      200,
    );
  });

  it('01§3 respond on a request that is no longer pending is 409 `Request is not pending (current status: X)`', async () => {
    const id = await pendingRequest(t, w.devA1a);
    await respond(id, { decision: 'approve' });
    const again = await respond(id, { decision: 'deny' });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('Request is not pending (current status: approved)');
  });

  it('01§3 approving a request without a file hash is refused: 200 denied/refused with the reason, audit result denied, elevation.denied', async () => {
    const id = await pendingRequest(t, w.devA1a, NO_HASH);
    const res = await respond(id, { decision: 'approve' });
    expect(res.status).toBe(200);
    const refused = { status: 'denied', enforcementStatus: 'refused', expiresAt: null, reason: expect.stringMatching(/file hash/) };
    expect(res.body).toEqual({ success: true, id, ...refused, ...DECIDED_BY_HUMAN });
    expect(await getRequest(id)).toMatchObject({
      status: 'denied',
      enforcementStatus: 'refused',
      approvedByUserId: null,
      denialReason: res.body.reason,
    });
    const audit = audits('pam.elevation_request.approve');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ result: 'denied', errorMessage: res.body.reason });
    expect(outbox('elevation.denied')[0]?.payload).toMatchObject({
      elevationRequestId: id,
      enforcementStatus: 'refused',
      reason: res.body.reason,
    });
    expect(outbox('elevation.approved')).toEqual([]);
    expect(trail(id).at(-1)).toMatchObject({ eventType: 'denied', actor: 'system', actorUserId: w.users.orgUser.id });
  });

  it('01§4.9 a requester cannot approve their own request (403); another approver can', async () => {
    const tech = await seedUser(t, {
      email: 'ptech@a.test',
      partner: { partnerId: w.partnerA.id, roleId: ROLES.partnerTechnician, orgAccess: 'all' },
      login: 'mint',
      mfa: true,
    });
    const jit = await t.call('POST', `${API}/pam/elevation-requests`, {
      token: tech.token,
      body: { deviceId: w.devA1a.deviceId, reason: 'maintenance' },
    });
    expect(jit.status).toBe(201);
    const own = await respond(jit.body.request.id, { decision: 'approve' }, tech.token);
    expect(own.status).toBe(403);
    expect(own.body.code).toBe('SELF_APPROVAL_FORBIDDEN');
    expect((await getRequest(jit.body.request.id)).status).toBe('pending');
    expect((await respond(jit.body.request.id, { decision: 'approve' })).body.status).toBe('approved');
  });

  it('01§4.9 respond and revoke need pam:approve and MFA, in reach (404), within the site restriction (403)', async () => {
    const id = await pendingRequest(t, w.devA1b);
    const tech = await seedUser(t, {
      email: 'otech@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgTechnician },
      login: 'mint',
      mfa: true,
    });
    const noMfa = await seedUser(t, { email: 'nomfa@a1.test', org: { orgId: w.orgA1.id }, login: 'mint', mfa: false });
    expect((await respond(id, { decision: 'approve' }, tech.token)).status).toBe(403);
    const mfa = await respond(id, { decision: 'approve' }, noMfa.token);
    expect(mfa.status).toBe(403);
    expect(mfa.body.code).toBe('MFA_REQUIRED');
    expect((await respond(id, { decision: 'approve' }, w.tokens.bAdmin)).status).toBe(404);
    const site = await respond(id, { decision: 'approve' }, w.tokens.siteUser);
    expect(site.status).toBe(403);
    expect(site.body.error).toBe('Access to this site denied');
    expect((await revoke(id, { reason: 'x' }, w.tokens.siteUser)).status).toBe(403);
    expect((await getRequest(id)).status).toBe('pending');
    expect((await respond(id, { decision: 'approve' }, w.tokens.aTech)).status).toBe(200);
  });

  it('01§3 concurrency: 10 parallel approvals of one request → exactly one succeeds, nine are 409', async () => {
    const id = await pendingRequest(t, w.devA1a);
    const approvers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        seedUser(t, { email: `approver${i}@a1.test`, org: { orgId: w.orgA1.id }, login: 'mint', mfa: true }),
      ),
    );
    const results = await Promise.all(approvers.map((a) => respond(id, { decision: 'approve' }, a.token)));
    const ok = results.filter((r) => r.status === 200);
    const conflicts = results.filter((r) => r.status === 409);
    expect(ok).toHaveLength(1);
    expect(conflicts).toHaveLength(9);
    for (const r of conflicts) expect(r.body.error).toBe('Request is not pending (current status: approved)');
    expect(trail(id).filter((e) => e.eventType === 'approved')).toHaveLength(1);
    expect(audits('pam.elevation_request.approve')).toHaveLength(1);
    expect(outbox('elevation.approved')).toHaveLength(1);
    expect((await getRequest(id)).revision).toBe(2);
  });

  it('01§3 concurrency: an approval racing a denial: one wins, the other is 409 naming the winner', async () => {
    const id = await pendingRequest(t, w.devA1a);
    const [a, b] = await Promise.all([
      respond(id, { decision: 'approve' }),
      respond(id, { decision: 'deny' }, w.tokens.aAdmin),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 409]);
    const winner = a.status === 200 ? a.body.status : b.body.status;
    const loser = a.status === 409 ? a : b;
    expect(loser.body.error).toBe(`Request is not pending (current status: ${winner})`);
  });

  it('01§4.9 critical-tier approvals (AI tool action of risk tier 4) need the password: missing or wrong → 401 reauth_required', async () => {
    const id = await pendingRequest(t, w.devA1a, CRITICAL);
    const missing = await respond(id, { decision: 'approve' });
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('reauth_required');
    const wrong = await respond(id, { decision: 'approve', reauthPassword: 'not-my-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('reauth_required');
    const mfaInstead = await respond(id, { decision: 'approve', reauthMfaCode: '123456' });
    expect(mfaInstead.status).toBe(401);
    expect((await getRequest(id)).status).toBe('pending');
    const ok = await respond(id, { decision: 'approve', reauthPassword: SEED_PASSWORD });
    expect(ok.status).toBe(200);
    expect(await getRequest(id)).toMatchObject({ status: 'approved', decidedAssuranceLevel: 'reauth' });
    expect(ok.body).toMatchObject({ decisionSource: 'human', decidedAssuranceLevel: 'reauth', decidedVia: 'api' });
    // A deny is never held up; tier 3 and UAC prompts are not critical.
    const deny = await pendingRequest(t, w.devA1a, CRITICAL);
    expect((await respond(deny, { decision: 'deny' })).status).toBe(200);
    const tier3 = await pendingRequest(t, w.devA1a, AI);
    expect((await respond(tier3, { decision: 'approve' })).status).toBe(200);
    // The system administrator re-enters its own password.
    const admin = await pendingRequest(t, w.devA1a, CRITICAL);
    expect((await respond(admin, { decision: 'approve', reauthPassword: ADMIN_PASSWORD }, sys)).status).toBe(200);
  });

  it('api-notes PAM: re-authentication failures are throttled like sign-in (5 per 5 minutes), also when the guesses arrive at once: of 30 parallel guesses 5 are checked, 25 are 429', async () => {
    const id = await pendingRequest(t, w.devA1a, CRITICAL);
    const guesses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => respond(id, { decision: 'approve', reauthPassword: `guess-${i}` })),
    );
    const statuses = guesses.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    for (const r of guesses.filter((g) => g.status === 429)) {
      expect(r.body.code).toBe('TOO_MANY_REAUTH_ATTEMPTS');
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
    // The window is used up: even the right password waits.
    expect((await respond(id, { decision: 'approve', reauthPassword: SEED_PASSWORD })).status).toBe(429);
    expect((await getRequest(id)).status).toBe('pending');
  });

  it('api-notes PAM: a successful re-authentication clears the failures counted before it, as a successful sign-in does', async () => {
    const first = await pendingRequest(t, w.devA1a, CRITICAL);
    for (let i = 0; i < 4; i++)
      expect((await respond(first, { decision: 'approve', reauthPassword: `guess-${i}` })).status).toBe(401);
    expect((await respond(first, { decision: 'approve', reauthPassword: SEED_PASSWORD })).status).toBe(200);
    // A fresh count: five more failures are checked, the sixth attempt is refused.
    const next = await pendingRequest(t, w.devA1a, CRITICAL);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await respond(next, { decision: 'approve', reauthPassword: `again-${i}` })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  /** An approver without a password who enabled TOTP with the code of the current step. */
  async function passwordlessTotpApprover() {
    const approver = await seedUser(t, { email: 'sso@a1.test', org: { orgId: w.orgA1.id }, login: 'mint', mfa: true });
    const setup = await t.call('POST', `${API}/auth/mfa/setup`, { token: approver.token });
    expect(setup.status, setup.text).toBe(200);
    const totp = totpFor(setup.body.secret);
    const enableCode = totp.generate();
    const enable = await t.call('POST', `${API}/auth/mfa/enable`, { token: approver.token, body: { code: enableCode } });
    expect(enable.status, enable.text).toBe(200);
    t.db.update(users).set({ passwordHash: null }).where(eq(users.id, approver.id)).run();
    // The next step's code is valid now (±1 step) and not yet used.
    const nextCode = totp.generate({ timestamp: Date.now() + 30_000 });
    return { token: enable.body.tokens.accessToken as string, enableCode, nextCode };
  }

  it('01§4.9 critical-tier approvals by an account without a password take a TOTP code (once)', async () => {
    const { token, nextCode } = await passwordlessTotpApprover();
    const id = await pendingRequest(t, w.devA1a, CRITICAL);
    const missing = await respond(id, { decision: 'approve' }, token);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ code: 'reauth_required', factor: 'mfa_code' });
    expect((await respond(id, { decision: 'approve', reauthMfaCode: '000000' }, token)).status).toBe(401);
    const ok = await respond(id, { decision: 'approve', reauthMfaCode: nextCode }, token);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'approved', decidedAssuranceLevel: 'reauth', decidedVia: 'api' });
    const next = await pendingRequest(t, w.devA1a, CRITICAL);
    const again = await respond(next, { decision: 'approve', reauthMfaCode: nextCode }, token);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject({ code: 'reauth_required', error: 'MFA code already used; wait for the next one' });
  });

  it('01§4.5 a TOTP code used for /auth/mfa/enable is refused for a critical-tier approval in its step, also after a restart', async () => {
    const { token, enableCode } = await passwordlessTotpApprover();
    const id = await pendingRequest(t, w.devA1a, CRITICAL);
    const reused = await respond(id, { decision: 'approve', reauthMfaCode: enableCode }, token);
    expect(reused.status).toBe(401);
    expect(reused.body).toMatchObject({ code: 'reauth_required', error: 'MFA code already used; wait for the next one' });
    // A new server process on the same data directory remembers the step.
    const restarted = await restart();
    try {
      const res = await restarted.app.inject({
        method: 'POST',
        url: `${API}/pam/elevation-requests/${id}/respond`,
        headers: { authorization: `Bearer ${token}` },
        payload: { decision: 'approve', reauthMfaCode: enableCode },
      });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ error: 'MFA code already used; wait for the next one' });
    } finally {
      await restarted.app.close();
    }
    expect((await getRequest(id)).status).toBe('pending');
  });

  it('01§4.9 step-up policy: under-assured approvals are 403 while a deny is never blocked', async () => {
    t.db
      .update(organizations)
      .set({ settings: { pamStepUpRequired: true } })
      .where(eq(organizations.id, w.orgA1.id))
      .run();
    const id = await pendingRequest(t, w.devA1a);
    const res = await respond(id, { decision: 'approve' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('STEP_UP_REQUIRED');
    expect((await respond(id, { decision: 'deny' })).body.status).toBe('denied');
  });

  it('01§4.9 "when partner policy enforces step-up": pamStepUpRequired is a partner setting of the API, and then under-assured approvals in its organizations are 403', async () => {
    const set = await t.call('PATCH', `${API}/orgs/partners/${w.orgA1.partnerId}`, { token: sys, body: { settings: { pamStepUpRequired: true } } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.settings).toMatchObject({ pamStepUpRequired: true });
    const id = await pendingRequest(t, w.devA1a);
    const res = await respond(id, { decision: 'approve' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('STEP_UP_REQUIRED');
  });

  // ---- WebAuthn ----

  it('01§4.9 assertion challenge: {options} with a challenge, 120 s, bound to request and caller; no allowCredentials without an approver device', async () => {
    const id = await pendingRequest(t, w.devA1a);
    const res = await t.call('POST', `${API}/pam/elevation-requests/${id}/assertion-challenge`, {
      token: w.tokens.orgUser,
    });
    expect(res.status).toBe(200);
    expect(res.body.options).toMatchObject({
      challenge: expect.any(String),
      rpId: 'localhost',
      timeout: 120_000,
      userVerification: 'required',
    });
    expect('allowCredentials' in res.body.options).toBe(false);
    const stored = t.db.select().from(pamWebauthnChallenges).all();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      purpose: 'assertion',
      userId: w.users.orgUser.id,
      elevationRequestId: id,
      challenge: res.body.options.challenge,
    });
    const ttl = Date.parse(stored[0]?.expiresAt ?? '') - Date.parse(stored[0]?.createdAt ?? '');
    expect(ttl).toBe(120_000);
    const viewer = await seedUser(t, {
      email: 'viewer@a1.test',
      org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer },
      login: 'mint',
      mfa: true,
    });
    expect(
      (await t.call('POST', `${API}/pam/elevation-requests/${id}/assertion-challenge`, { token: viewer.token })).status,
    ).toBe(403);
    await respond(id, { decision: 'deny' });
    expect(
      (await t.call('POST', `${API}/pam/elevation-requests/${id}/assertion-challenge`, { token: w.tokens.orgUser }))
        .status,
    ).toBe(409);
  });

  it('01§4.9 a WebAuthn proof is verified: unregistered credential, wrong challenge, other caller, expired or replayed → 401, never a silent downgrade', async () => {
    const authenticator = new SoftAuthenticator();
    const id = await pendingRequest(t, w.devA1a);
    const challenge = async (requestId = id, token = w.tokens.orgUser) =>
      (await t.call('POST', `${API}/pam/elevation-requests/${requestId}/assertion-challenge`, { token })).body.options
        .challenge as string;

    // No registered approver device: the proof cannot verify.
    const unregistered = await respond(id, { decision: 'approve', proof: authenticator.assert(await challenge()) });
    expect(unregistered.status).toBe(401);
    expect(unregistered.body.code).toBe('INVALID_PROOF');
    expect((await getRequest(id)).status).toBe('pending');

    // Register the authenticator as the approver's platform device.
    const options = await t.call('POST', `${API}/pam/approver-devices/registration-options`, {
      token: w.tokens.orgUser,
    });
    expect(options.status).toBe(200);
    expect(options.body.options).toMatchObject({
      challenge: expect.any(String),
      rp: { id: 'localhost' },
      attestation: 'none',
    });
    const bad = await t.call('POST', `${API}/pam/approver-devices`, {
      token: w.tokens.orgUser,
      body: { name: 'laptop', response: authenticator.register('not-the-challenge') },
    });
    expect(bad.status).toBe(400);
    const registered = await t.call('POST', `${API}/pam/approver-devices`, {
      token: w.tokens.orgUser,
      body: { name: 'laptop', response: authenticator.register(options.body.options.challenge) },
    });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.body.device).toMatchObject({
      name: 'laptop',
      credentialId: authenticator.id,
      transports: ['internal'],
    });
    const listed = await t.call('GET', `${API}/pam/approver-devices`, { token: w.tokens.orgUser });
    expect(listed.body.devices).toHaveLength(1);
    const withDevice = await t.call('POST', `${API}/pam/elevation-requests/${id}/assertion-challenge`, {
      token: w.tokens.orgUser,
    });
    expect(withDevice.body.options.allowCredentials).toEqual([
      { id: authenticator.id, type: 'public-key', transports: ['internal'] },
    ]);

    // A made-up challenge, a challenge of another request, another caller's challenge, a wrong origin, an
    // expired challenge: 401 each time.
    expect(
      (await respond(id, { decision: 'approve', proof: authenticator.assert('bm90LWEtY2hhbGxlbmdl') })).status,
    ).toBe(401);
    const other = await pendingRequest(t, w.devA1a);
    expect(
      (await respond(id, { decision: 'approve', proof: authenticator.assert(await challenge(other)) })).status,
    ).toBe(401);
    expect(
      (await respond(id, { decision: 'approve', proof: authenticator.assert(await challenge(id, w.tokens.aAdmin)) }))
        .status,
    ).toBe(401);
    expect(
      (
        await respond(id, {
          decision: 'approve',
          proof: authenticator.assert(await challenge(), { origin: 'https://evil.example' }),
        })
      ).status,
    ).toBe(401);
    expect(
      (await respond(id, { decision: 'approve', proof: authenticator.assert(await challenge(), { flags: 0x01 }) }))
        .status,
    ).toBe(401);
    const stale = await challenge();
    t.db
      .update(pamWebauthnChallenges)
      .set({ expiresAt: new Date(Date.now() - 1).toISOString() })
      .where(eq(pamWebauthnChallenges.challenge, stale))
      .run();
    expect((await respond(id, { decision: 'approve', proof: authenticator.assert(stale) })).status).toBe(401);
    expect((await getRequest(id)).status).toBe('pending');

    // The real thing, then its replay on another request.
    const good = await challenge();
    const proof = authenticator.assert(good);
    const approved = await respond(id, { decision: 'approve', proof });
    expect(approved.status, approved.text).toBe(200);
    expect(await getRequest(id)).toMatchObject({ status: 'approved', decidedAssuranceLevel: 'webauthn' });
    expect((await respond(other, { decision: 'approve', proof })).status).toBe(401);

    // Under a step-up policy the WebAuthn approval is enough.
    t.db
      .update(organizations)
      .set({ settings: { pamStepUpRequired: true } })
      .where(eq(organizations.id, w.orgA1.id))
      .run();
    expect(
      (await respond(other, { decision: 'approve', proof: authenticator.assert(await challenge(other)) })).status,
    ).toBe(200);

    const del = await t.call('DELETE', `${API}/pam/approver-devices/${registered.body.device.id}`, {
      token: w.tokens.orgUser,
    });
    expect(del.body).toEqual({ success: true });
  });

  // ---- revoke ----

  it('01§3 revoke: approved/auto_approved/actuating → revoked, cleanup_pending; reason 1-2000 required; otherwise 409', async () => {
    const id = await pendingRequest(t, w.devA1a);
    const notActive = await revoke(id, { reason: 'too early' });
    expect(notActive.status).toBe(409);
    expect(notActive.body.error).toBe('Request is not active (current status: pending)');
    await respond(id, { decision: 'approve' });
    for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(2001) }])
      expect((await revoke(id, body)).status).toBe(400);
    const res = await revoke(id, { reason: 'incident response' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, id, status: 'revoked', enforcementStatus: 'cleanup_pending' });
    expect(await getRequest(id)).toMatchObject({
      status: 'revoked',
      revokedByUserId: w.users.orgUser.id,
      revokedByName: 'org-admin',
      revokedReason: 'incident response',
      revision: 3,
    });
    expect(trail(id).map((e) => e.eventType)).toEqual(['requested', 'approved', 'revoked']);
    expect(audits('pam.elevation_request.revoke')).toHaveLength(1);
    expect(outbox('elevation.revoked')).toHaveLength(1);
    const twice = await revoke(id, { reason: 'again' });
    expect(twice.status).toBe(409);
    expect(twice.body.error).toBe('Request is not active (current status: revoked)');

    await createRule(t, sys, { orgId: w.orgA1.id, name: 'auto', verdict: 'auto_approve', matchHash: H1 });
    const auto = await ingest(t, w.devA1a, UAC);
    expect((await revoke(auto.body.id, { reason: 'x' })).body.status).toBe('revoked');
    const actuating = await pendingRequest(t, w.devA1b, AI);
    t.db
      .update(elevationRequests)
      .set({ status: 'actuating', expiresAt: new Date(Date.now() + 60_000).toISOString() })
      .where(eq(elevationRequests.id, actuating))
      .run();
    expect((await revoke(actuating, { reason: 'x' })).body.status).toBe('revoked');
    const denied = await pendingRequest(t, w.devA1a, AI);
    await respond(denied, { decision: 'deny' });
    expect((await revoke(denied, { reason: 'x' })).body.error).toBe('Request is not active (current status: denied)');
  });

  // ---- expiry ----

  it('01§4.9 the expiry enforcer (durable periodic job) expires elevations past expiresAt, with a system trail event', async () => {
    const expired = await pendingRequest(t, w.devA1a);
    const live = await pendingRequest(t, w.devA1a);
    const pending = await pendingRequest(t, w.devA1a);
    await respond(expired, { decision: 'approve' });
    await respond(live, { decision: 'approve' });
    const past = new Date(Date.now() - 60_000).toISOString();
    t.db.update(elevationRequests).set({ expiresAt: past }).where(eq(elevationRequests.id, expired)).run();
    t.worker.schedulePeriodicJobs();
    expect(t.db.select().from(jobs).where(eq(jobs.type, 'pam.expire-elevations')).all()).toHaveLength(1);
    await t.worker.tick();
    expect(await getRequest(expired)).toMatchObject({
      status: 'expired',
      enforcementStatus: 'cleanup_pending',
      revision: 3,
    });
    expect(trail(expired).at(-1)).toMatchObject({
      eventType: 'expired',
      actor: 'system',
      actorUserId: null,
      occurredAt: past,
    });
    expect((await getRequest(live)).status).toBe('approved');
    expect((await getRequest(pending)).status).toBe('pending');
    expect(outbox('elevation.expired')).toHaveLength(1);
    expect(audits('pam.elevation_request.expire')).toHaveLength(1);
    // The job is durable and periodic: its next run waits 15 s (other subscribers of elevation.expired, such as
    // webhook fan-out, may run meanwhile), then catches the live one once it is due.
    const next = t.db.select().from(jobs).where(eq(jobs.type, 'pam.expire-elevations')).all();
    expect(next).toHaveLength(1);
    expect(Date.parse(next[0]?.runAt ?? '')).toBeGreaterThan(Date.now() + 10_000);
    t.db
      .update(elevationRequests)
      .set({ expiresAt: new Date(Date.now() - 1).toISOString() })
      .where(eq(elevationRequests.id, live))
      .run();
    expect(await t.worker.tick(new Date(Date.now() + 16_000))).toBeGreaterThan(0);
    expect((await getRequest(live)).status).toBe('expired');
    expect((await revoke(live, { reason: 'late' })).status).toBe(409);
  });

  it('01§4.9 elevations that expired while the server was down are expired when it starts again', async () => {
    const id = await pendingRequest(t, w.devA1a);
    await createRule(t, sys, {
      orgId: w.orgA1.id,
      name: 'auto',
      verdict: 'auto_approve',
      matchHash: H1,
      approvalDurationMinutes: 1,
    });
    const auto = (await ingest(t, w.devA1a, UAC)).body.id as string;
    await respond(id, { decision: 'approve', durationMinutes: 1 });
    // The server stops (this app's worker never ran) and is down for an hour: both elevations ran out
    // meanwhile. A new server process starts on the same data directory.
    t.db
      .update(elevationRequests)
      .set({ expiresAt: new Date(Date.now() - 3_600_000).toISOString() })
      .run();
    const restarted = await restart();
    try {
      restarted.worker.schedulePeriodicJobs();
      await restarted.worker.tick();
      const rows = restarted.db
        .select()
        .from(elevationRequests)
        .where(and(eq(elevationRequests.status, 'expired')))
        .all();
      expect(rows.map((r) => r.id).sort()).toEqual([id, auto].sort());
      const events = restarted.db
        .select()
        .from(elevationAuditEvents)
        .where(eq(elevationAuditEvents.eventType, 'expired'))
        .all();
      expect(events).toHaveLength(2);
    } finally {
      await restarted.app.close();
    }
  });
});
