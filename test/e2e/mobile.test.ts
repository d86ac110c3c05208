import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS, http } from '../helpers/cli.js';
import { createTenant, enroll, invitePerson, ok, sharedServer } from '../helpers/fixtures.js';

describe('e2e: the mobile interface through the CLI (02 §4.6)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  const server = sharedServer();

  it('02§4.6 register a phone, read the summary and devices, reboot an online device, remove the phone', async () => {
    const tenant = await createTenant(server.url, server.token, 'mobile');
    const person = await invitePerson(server.url, server.token, tenant.partnerId);
    const cli = server.track(person.cli);

    const phone = await cli.json(['mobile', 'devices', 'register', '--device-id', 'e2e-phone', '--platform', 'android', '--fcm-token', 'fcm-e2e']);
    expect(phone).toMatchObject({ deviceId: 'e2e-phone', platform: 'android', notificationsEnabled: true });
    const ios = await cli.run(['mobile', 'devices', 'register', '--device-id', 'e2e-ios', '--platform', 'ios']);
    expect(ios.exitCode).not.toBe(0);
    expect(ios.stderr).toContain('apnsToken is required for iOS devices');

    const key = await ok<{ key: string }>(http(server.url, 'POST', '/enrollment-keys', { token: person.token, body: { orgId: tenant.orgId, name: 'fleet' } }), 'enrollment key');
    const agent = await ok<{ agentId: string; deviceId: string; authToken: string }>(enroll(server.url, key.key, 'e2e-mobile-1'), 'enroll');
    await ok(http(server.url, 'POST', `/agents/${agent.agentId}/heartbeat`, { token: agent.authToken, body: {} }), 'heartbeat');

    const summary = await cli.json(['mobile', 'summary', '--org-id', tenant.orgId]);
    expect(summary).toEqual({ devices: { total: 1, online: 1, offline: 0, maintenance: 0 }, alerts: { total: 0, active: 0, acknowledged: 0, resolved: 0, critical: 0 } });
    const devices = await cli.json(['mobile', 'devices', 'list', '--search', 'e2e-mobile']);
    expect(devices.map((d: { hostname: string }) => d.hostname)).toEqual(['e2e-mobile-1']);
    expect(await cli.json(['mobile', 'inbox'])).toEqual([]);

    const reboot = await cli.json(['mobile', 'actions', agent.deviceId, '--action', 'reboot']);
    expect(reboot).toMatchObject({ action: 'reboot', commandId: expect.any(String) });
    expect(await cli.json(['mobile', 'approvals', 'list'])).toEqual([]);

    const removed = await cli.run(['mobile', 'devices', 'delete', phone.id, '--yes']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    const again = await cli.run(['mobile', 'devices', 'delete', phone.id, '--yes']);
    expect(again.exitCode).not.toBe(0);
    expect(again.stderr).toContain('Mobile device not found');
  });
});
