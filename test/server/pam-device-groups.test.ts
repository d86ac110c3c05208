import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { elevationRequests } from '../../src/server/db/schema/index.js';
import { API, UAC, pendingRequest, usePamWorld, type PamWorld } from '../helpers/pam.js';
import { seedOrgRole, seedUser, type SeededUser } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

/** What an approver of organization A1 holds, plus the audit export's audit:export. */
const APPROVER = ['devices:read', 'devices:execute', 'pam:approve', 'pam:manage_policy', 'audit:export'];

/**
 * 01 §1 "Every query is limited to the caller's position in it" (… Site → Device Group → Device) and §2.6:
 * an organization user restricted to device groups reaches, in PAM, only the requests of devices in those groups,
 * wherever PAM applies the site restriction: the request list, one request, /pam/active, respond, revoke, the
 * assertion challenge, the audit export, rule preview and the mobile approvals inbox (api-notes: "`deviceGroupIds`
 * restricts every device read"). Reads leave the others out (404 for one request); decisions answer 403, as a
 * request outside the caller's sites does.
 */
describe('PAM for a user restricted to device groups (01 §1, §2.6, §4.9)', () => {
  let t: TestApp;
  let w: PamWorld;
  /** Org A1: devA1a is in the group, devA1b (another site) and devA1none (no site) are not. */
  let grouped: SeededUser;
  let inside: string;
  let outside: string;
  let unsited: string;

  const as = (token: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });
  const idsOf = (list: { id: string }[]) => list.map((r) => r.id);
  const statusOf = (id: string) =>
    t.db.select({ status: elevationRequests.status }).from(elevationRequests).where(eq(elevationRequests.id, id)).get()
      ?.status;

  usePamWorld((app, world) => ([t, w] = [app, world]), { SVC_EXPORT_SETTLE_SECONDS: '0' });

  beforeEach(async () => {
    const group = await as(w.tokens.orgUser, 'POST', '/groups', { name: 'Mine', deviceIds: [w.devA1a.deviceId] });
    expect(group.status, group.text).toBe(201);
    const role = seedOrgRole(t, w.orgA1.id, APPROVER, 'Grouped approver');
    grouped = await seedUser(t, {
      email: 'grouped@a1.test',
      org: { orgId: w.orgA1.id, roleId: role, deviceGroupIds: [group.body.data.id] },
      login: 'mint',
      mfa: true,
    });
    inside = await pendingRequest(t, w.devA1a);
    outside = await pendingRequest(t, w.devA1b);
    unsited = await pendingRequest(t, w.devA1none);
  });

  it('01§2.6 a user restricted to device groups lists and reads only the elevation requests of devices in them (others 404)', async () => {
    const list = await as(grouped.token, 'GET', '/pam/elevation-requests');
    expect(list.status, list.text).toBe(200);
    expect(idsOf(list.body.requests)).toEqual([inside]);
    expect(list.body.pagination.total).toBe(1);
    const byDevice = await as(grouped.token, 'GET', `/pam/elevation-requests?deviceId=${w.devA1b.deviceId}`);
    expect(byDevice.body.requests).toEqual([]);
    expect((await as(grouped.token, 'GET', `/pam/elevation-requests/${inside}`)).status).toBe(200);
    for (const id of [outside, unsited]) {
      const one = await as(grouped.token, 'GET', `/pam/elevation-requests/${id}`);
      expect(one.status).toBe(404);
      expect(one.body.error).toBe('Elevation request not found');
    }
    // The organization's unrestricted admin still sees all three.
    expect((await as(w.tokens.orgUser, 'GET', '/pam/elevation-requests')).body.requests).toHaveLength(3);
  });

  it('01§2.6 /pam/active of a user restricted to device groups shows only the elevations of devices in them', async () => {
    for (const id of [inside, outside, unsited]) {
      const approved = await as(w.tokens.orgUser, 'POST', `/pam/elevation-requests/${id}/respond`, {
        decision: 'approve',
      });
      expect(approved.status, approved.text).toBe(200);
    }
    const active = await as(grouped.token, 'GET', '/pam/active');
    expect(active.status, active.text).toBe(200);
    expect(idsOf(active.body.active)).toEqual([inside]);
    expect((await as(w.tokens.orgUser, 'GET', '/pam/active')).body.active).toHaveLength(3);
  });

  it('01§2.6 a user restricted to device groups cannot approve or deny a request for a device outside them (403, as outside its sites)', async () => {
    for (const id of [outside, unsited]) {
      for (const decision of ['approve', 'deny']) {
        const res = await as(grouped.token, 'POST', `/pam/elevation-requests/${id}/respond`, { decision });
        expect({ id, decision, status: res.status, code: res.body.code }).toEqual({
          id,
          decision,
          status: 403,
          code: 'DEVICE_ACCESS_DENIED',
        });
      }
      const challenge = await as(grouped.token, 'POST', `/pam/elevation-requests/${id}/assertion-challenge`);
      expect(challenge.status).toBe(403);
      expect(statusOf(id)).toBe('pending');
    }
    const ok = await as(grouped.token, 'POST', `/pam/elevation-requests/${inside}/respond`, { decision: 'approve' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('approved');
  });

  it('01§2.6 a user restricted to device groups cannot revoke an elevation on a device outside them (403)', async () => {
    for (const id of [inside, outside]) {
      const approved = await as(w.tokens.orgUser, 'POST', `/pam/elevation-requests/${id}/respond`, {
        decision: 'approve',
      });
      expect(approved.status, approved.text).toBe(200);
    }
    const refused = await as(grouped.token, 'POST', `/pam/elevation-requests/${outside}/revoke`, { reason: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('DEVICE_ACCESS_DENIED');
    expect(statusOf(outside)).toBe('approved');
    const revoked = await as(grouped.token, 'POST', `/pam/elevation-requests/${inside}/revoke`, { reason: 'x' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.status).toBe('revoked');
  });

  it('01§2.6 an empty device-group restriction reaches no elevation request', async () => {
    const none = await seedUser(t, {
      email: 'no-groups@a1.test',
      org: { orgId: w.orgA1.id, roleId: seedOrgRole(t, w.orgA1.id, APPROVER, 'No groups'), deviceGroupIds: [] },
      login: 'mint',
      mfa: true,
    });
    expect((await as(none.token, 'GET', '/pam/elevation-requests')).body.requests).toEqual([]);
    expect((await as(none.token, 'GET', `/pam/elevation-requests/${inside}`)).status).toBe(404);
    const respond = await as(none.token, 'POST', `/pam/elevation-requests/${inside}/respond`, { decision: 'deny' });
    expect(respond.status).toBe(403);
    expect(statusOf(inside)).toBe('pending');
  });

  it('01§2.6 the elevation audit export of a user restricted to device groups carries only the trail of devices in them', async () => {
    // Settle time 0: rows recorded before now are exported; let the clock pass the last write.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const window = {
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() + 1000).toISOString(),
    };
    const exported = async (token: string, query: Record<string, string> = {}) => {
      const qs = new URLSearchParams({ ...window, format: 'jsonl', ...query });
      const res = await as(token, 'GET', `/pam/elevation-audit/export?${qs.toString()}`);
      expect(res.status, res.text).toBe(200);
      return res.text
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { elevation_request_id: string }).elevation_request_id);
    };
    expect(await exported(grouped.token)).toEqual([inside]);
    expect(await exported(grouped.token, { deviceId: w.devA1b.deviceId })).toEqual([]);
    expect(await exported(grouped.token, { elevationRequestId: unsited })).toEqual([]);
    // An unrestricted exporter of the organization gets the three.
    const auditor = await seedUser(t, {
      email: 'auditor@a1.test',
      org: { orgId: w.orgA1.id, roleId: seedOrgRole(t, w.orgA1.id, APPROVER, 'Auditor') },
      login: 'mint',
      mfa: true,
    });
    expect((await exported(auditor.token)).sort()).toEqual([inside, outside, unsited].sort());
  });

  it('01§2.6 rule preview of a user restricted to device groups counts and samples only requests of devices in them', async () => {
    const preview = await as(grouped.token, 'POST', '/pam/rules/preview', { matchHash: UAC.target_executable_hash });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body).toMatchObject({ totalMatched: 1, totalScanned: 1 });
    expect(idsOf(preview.body.sample)).toEqual([inside]);
    const all = await as(w.tokens.orgUser, 'POST', '/pam/rules/preview', { matchHash: UAC.target_executable_hash });
    expect(all.body).toMatchObject({ totalMatched: 3, totalScanned: 3 });
  });

  it('01§2.6 the mobile approvals inbox of a user restricted to device groups lists, counts and opens only requests of devices in them', async () => {
    const pending = await as(grouped.token, 'GET', '/mobile/approvals/pending');
    expect(pending.status, pending.text).toBe(200);
    expect(idsOf(pending.body.approvals)).toEqual([inside]);
    expect((await as(grouped.token, 'GET', '/mobile/approvals/pending/count')).body).toEqual({ count: 1 });
    expect((await as(grouped.token, 'GET', `/mobile/approvals/${inside}`)).status).toBe(200);
    expect((await as(grouped.token, 'GET', `/mobile/approvals/${outside}`)).status).toBe(404);
    const approve = await as(grouped.token, 'POST', `/mobile/approvals/${outside}/approve`, {});
    expect(approve.status).toBe(404);
    expect(statusOf(outside)).toBe('pending');
    expect((await as(w.tokens.orgUser, 'GET', '/mobile/approvals/pending/count')).body).toEqual({ count: 3 });
  });
});
