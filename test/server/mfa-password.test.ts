import { describe, expect, it } from 'vitest';
import { ADMIN_PASSWORD, type TestApp, useAdminApp } from '../helpers/server.js';
import { totp } from '../helpers/totp.js';

/** Issue 15 item 2: clients of hosted deployments send currentPassword to MFA setup and enable. */
describe('MFA setup and enable with currentPassword (01 §4.5; issue 15 §2)', () => {
  let t: TestApp, token: string;
  useAdminApp((app, adminToken) => ([t, token] = [app, adminToken]));

  it('issue 15 §2 setup and enable accept the right currentPassword', async () => {
    const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token, body: { currentPassword: ADMIN_PASSWORD } });
    expect(setup.status).toBe(200);
    const enable = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: totp(setup.body.secret as string), currentPassword: ADMIN_PASSWORD } });
    expect(enable.status).toBe(200);
    expect(enable.body.user.mfaEnabled).toBe(true);
  });

  it('issue 15 §2 a wrong currentPassword is refused like change-password (401 INVALID_CURRENT_PASSWORD) and changes nothing', async () => {
    const refused = await t.call('POST', '/api/v1/auth/mfa/setup', { token, body: { currentPassword: 'wrong-password' } });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ error: 'Current password is incorrect', code: 'INVALID_CURRENT_PASSWORD' });
    // No setup was started by the refused call.
    const early = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: '123456' } });
    expect(early.body.code).toBe('MFA_SETUP_REQUIRED');

    const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token, body: {} });
    expect(setup.status).toBe(200);
    const wrong = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: totp(setup.body.secret as string), currentPassword: 'wrong-password' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_CURRENT_PASSWORD');
    const me = await t.call('GET', '/api/v1/users/me', { token });
    expect(me.body.mfaEnabled).toBe(false);
  });

  it('issue 15 §2 without currentPassword setup and enable work as before (the spec shows no body)', async () => {
    const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token });
    expect(setup.status).toBe(200);
    const enable = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: totp(setup.body.secret as string) } });
    expect(enable.status).toBe(200);
  });
});
