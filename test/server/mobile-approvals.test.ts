import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AI, UAC, pendingRequest, seedPamWorld, sha, type PamWorld } from '../helpers/pam.js';
import { SEED_PASSWORD } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const NO_HASH = Object.fromEntries(Object.entries(UAC).filter(([k]) => k !== 'target_executable_hash'));
const CRITICAL = { ...AI, tool_name: 'custom_admin_tool', risk_tier: 4, action_digest: sha('critical') };
const at = (minute: number) => ({ ...UAC, observed_at: `2024-06-05T12:${String(minute).padStart(2, '0')}:00Z` });

describe('mobile approvals inbox (02 §4.6, 05 wire notes 4.6)', () => {
  let t: TestApp;
  let w: PamWorld;
  beforeEach(async () => {
    t = await createTestApp();
    w = await seedPamWorld(t);
  });
  afterEach(async () => {
    await t.close();
  });
  const call = (method: 'GET' | 'POST', url: string, body?: unknown, token = w.tokens.orgUser) =>
    t.call(method, `/api/v1/mobile/approvals${url}`, { token, ...(body !== undefined ? { body } : {}) });

  it('05§4.6 GET /pending lists pending requests newest first with nextCursor; /pending/count counts them', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await pendingRequest(t, w.devA1a, at(i)));
    await pendingRequest(t, w.devA2, at(9));
    const first = await call('GET', '/pending?limit=2');
    expect(first.status, first.text).toBe(200);
    expect(first.body.approvals.map((a: { id: string }) => a.id)).toHaveLength(2);
    expect(first.body.approvals[0]).toMatchObject({ status: 'pending', deviceHostname: 'ws-a1a', flowType: 'uac_intercept', refusalReason: null, decidedAt: null });
    const rest = await call('GET', `/pending?limit=2&cursor=${first.body.nextCursor}`);
    expect(rest.body.nextCursor).toBeNull();
    const seen = [...first.body.approvals, ...rest.body.approvals].map((a: { id: string }) => a.id);
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await call('GET', '/pending/count')).body).toEqual({ count: 3 });
    expect((await call('GET', '/pending/count', undefined, w.tokens.aAdmin)).body).toEqual({ count: 4 });
  });

  it('05§4.6 GET /:id answers {approval}; absent or out of reach is 404 `Not found`', async () => {
    const id = await pendingRequest(t, w.devA1a, at(1));
    const res = await call('GET', `/${id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.approval).toMatchObject({ id, status: 'pending' });
    const foreign = await call('GET', `/${id}`, undefined, w.tokens.bAdmin);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('Not found');
    expect((await call('GET', `/${randomUUID()}`)).status).toBe(404);
  });

  it('02§4.6 approve goes through the PAM respond: the approval reads approved with decidedAt the approver time', async () => {
    const id = await pendingRequest(t, w.devA1a, at(1));
    const before = Date.now();
    const res = await call('POST', `/${id}/approve`, { durationMinutes: 30 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.approval).toMatchObject({ id, status: 'approved', enforcementStatus: 'pending_dispatch', refusalReason: null });
    expect(Date.parse(res.body.approval.decidedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect((await call('GET', '/pending/count')).body.count).toBe(0);
  });

  it('02§4.6 a refused approve returns enforcementStatus refused and reason; the approval reads denied with refusalReason', async () => {
    const id = await pendingRequest(t, w.devA1a, NO_HASH);
    const res = await call('POST', `/${id}/approve`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ enforcementStatus: 'refused', reason: expect.stringMatching(/file hash/) });
    expect(res.body.approval).toMatchObject({ status: 'denied', enforcementStatus: 'refused', refusalReason: res.body.reason });
    expect(typeof res.body.approval.decidedAt).toBe('string');
    const again = await call('GET', `/${id}`);
    expect(again.body.approval).toMatchObject({ status: 'denied', refusalReason: res.body.reason, decidedAt: res.body.approval.decidedAt });
  });

  it('05§4.6 deny; a decided request is 409 `Already decided` with finalStatus', async () => {
    const id = await pendingRequest(t, w.devA1a, at(1));
    const denied = await call('POST', `/${id}/deny`, { reason: 'not now' });
    expect(denied.status, denied.text).toBe(200);
    expect(denied.body.approval).toMatchObject({ status: 'denied', refusalReason: null, reason: null });
    const again = await call('POST', `/${id}/approve`, {});
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'Already decided', finalStatus: 'denied' });
  });

  it('05§4.6 an expired request is 410 `Expired` with finalStatus expired', async () => {
    const id = await pendingRequest(t, w.devA1a, at(1));
    expect((await call('POST', `/${id}/approve`, { durationMinutes: 5 })).status).toBe(200);
    t.services.pam.expiry.expireDue(new Date(Date.now() + 3600_000));
    const res = await call('POST', `/${id}/deny`, {});
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ error: 'Expired', finalStatus: 'expired' });
  });

  it('01§4.9 critical-tier approvals keep the re-authentication of the PAM respond (401 reauth_required, then the password)', async () => {
    const id = await pendingRequest(t, w.devA1a, CRITICAL);
    const missing = await call('POST', `/${id}/approve`, {});
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('reauth_required');
    const ok = await call('POST', `/${id}/approve`, { reauthPassword: SEED_PASSWORD });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.approval.status).toBe('approved');
  });

  it('05§4.6 the approvals inbox is a session with pam:approve: an API key is refused', async () => {
    const key = await t.call('POST', '/api/v1/api-keys', { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'k', scopes: ['*'] } });
    expect(key.status, key.text).toBe(201);
    const res = await t.call('GET', '/api/v1/mobile/approvals/pending', { apiKey: key.body.key });
    expect(res.status).toBe(403);
  });
});
