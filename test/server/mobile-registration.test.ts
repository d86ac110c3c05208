import { describe, expect, it } from 'vitest';
import type { World } from '../helpers/seed.js';
import type { TestApp } from '../helpers/server.js';
import { useWorld } from '../helpers/world.js';

let t: TestApp;
let w: World;
const as = useWorld({ mfa: true }, (app, world) => {
  t = app;
  w = world;
});

const IOS = { deviceId: 'phone-1', platform: 'ios', apnsToken: 'apns-token-1', model: 'iPhone 15', osVersion: '17.4', appVersion: '2.1.0' };

async function registered(body: Record<string, unknown> = IOS, who: 'orgUser' | 'aAdmin' = 'orgUser') {
  const res = await as(who, 'POST', '/mobile/devices', body);
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, any>;
}

describe('mobile registration and settings (02 §2.10, §4.6)', () => {
  it('02§4.6 POST /mobile/devices answers 201 with the bare row; every severity and no quiet hours by default', async () => {
    const row = await registered();
    expect(row).toMatchObject({
      userId: w.users.orgUser.id,
      deviceId: 'phone-1',
      platform: 'ios',
      apnsToken: 'apns-token-1',
      fcmToken: null,
      model: 'iPhone 15',
      notificationsEnabled: true,
      alertSeverities: ['critical', 'high', 'medium', 'low', 'info'],
      quietHours: null,
      status: 'active',
    });
    expect(typeof row.lastActiveAt).toBe('string');
  });

  it('02§4.6 the platform token rules: apnsToken for iOS, fcmToken for Android (400)', async () => {
    const ios = await as('orgUser', 'POST', '/mobile/devices', { deviceId: 'p', platform: 'ios', fcmToken: 'x' });
    expect(ios.status).toBe(400);
    expect(ios.body.error).toBe('apnsToken is required for iOS devices');
    const android = await as('orgUser', 'POST', '/mobile/devices', { deviceId: 'p', platform: 'android', apnsToken: 'x' });
    expect(android.status).toBe(400);
    expect(android.body.error).toBe('fcmToken is required for Android devices');
    const platform = await as('orgUser', 'POST', '/mobile/devices', { deviceId: 'p', platform: 'web', fcmToken: 'x' });
    expect(platform.status).toBe(400);
  });

  it('02§4.6 registering the same deviceId again updates the row (upsert), keeping its settings', async () => {
    const first = await registered();
    await as('orgUser', 'PATCH', `/mobile/devices/${first.id}/settings`, { severities: ['critical'] });
    const again = await registered({ ...IOS, apnsToken: 'apns-token-2', appVersion: '2.2.0' });
    expect(again.id).toBe(first.id);
    expect(again).toMatchObject({ apnsToken: 'apns-token-2', appVersion: '2.2.0', alertSeverities: ['critical'] });
  });

  it("02§4.6 another user's deviceId is 409 device_owned_by_other", async () => {
    await registered();
    const res = await as('aAdmin', 'POST', '/mobile/devices', IOS);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'This device is already registered to another account.', code: 'device_owned_by_other' });
  });

  it('02§4.6 settings: enabled, severities and quiet hours with an IANA time zone; answers the bare row', async () => {
    const row = await registered();
    const res = await as('orgUser', 'PATCH', `/mobile/devices/${row.id}/settings`, {
      enabled: false,
      severities: ['critical', 'high'],
      quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: row.id, notificationsEnabled: false, alertSeverities: ['critical', 'high'], quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' } });
    const cleared = await as('orgUser', 'PATCH', `/mobile/devices/${row.id}/settings`, { quietHours: null });
    expect(cleared.body.quietHours).toBeNull();
  });

  it('02§4.6 settings validation: `No settings provided`, unknown severity, bad time, unknown time zone (400)', async () => {
    const row = await registered();
    const url = `/mobile/devices/${row.id}/settings`;
    const empty = await as('orgUser', 'PATCH', url, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No settings provided');
    expect((await as('orgUser', 'PATCH', url, { severities: ['urgent'] })).status).toBe(400);
    expect((await as('orgUser', 'PATCH', url, { quietHours: { start: '25:00', end: '07:00' } })).status).toBe(400);
    const zone = await as('orgUser', 'PATCH', url, { quietHours: { start: '22:00', end: '07:00', timezone: 'Mars/Olympus' } });
    expect(zone.status).toBe(400);
    expect(zone.text).toContain('unknown IANA time zone');
  });

  it("02§4.6 settings and delete of another user's registration answer 404 `Mobile device not found`", async () => {
    const row = await registered();
    const patch = await as('aAdmin', 'PATCH', `/mobile/devices/${row.id}/settings`, { enabled: false });
    expect(patch.status).toBe(404);
    expect(patch.body.error).toBe('Mobile device not found');
    expect((await as('aAdmin', 'DELETE', `/mobile/devices/${row.id}`)).status).toBe(404);
    const del = await as('orgUser', 'DELETE', `/mobile/devices/${row.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expect((await as('orgUser', 'DELETE', `/mobile/devices/${row.id}`)).status).toBe(404);
  });

  it('02§4.6 push-token register and unregister answer {success:true}', async () => {
    expect((await as('orgUser', 'POST', '/mobile/notifications/register', { token: 'tok-1', platform: 'android' })).body).toEqual({ success: true });
    expect((await as('orgUser', 'POST', '/mobile/notifications/register', { token: 'tok-1', platform: 'android' })).status).toBe(200);
    expect((await as('orgUser', 'POST', '/mobile/notifications/register', { token: 'tok-2' })).status).toBe(400);
    expect((await as('orgUser', 'POST', '/mobile/notifications/unregister', { token: 'tok-1' })).body).toEqual({ success: true });
  });

  it('05§4.6 registration and settings are bearer only: an API key is refused (403 SESSION_REQUIRED)', async () => {
    const key = await t.call('POST', '/api/v1/api-keys', { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'k', scopes: ['*'] } });
    expect(key.status, key.text).toBe(201);
    const res = await t.call('POST', '/api/v1/mobile/devices', { apiKey: key.body.key, body: IOS });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('SESSION_REQUIRED');
  });
});
