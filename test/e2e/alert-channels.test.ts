import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, cliUser, E2E_TIMEOUT_MS, login, startServer, type CliUser, type E2eServer } from '../helpers/cli.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { enableMfa } from '../helpers/mfa.js';

describe('svc alerts channels | policies, svc notifications (02 §2.4, §2.6, §4.2)', { timeout: E2E_TIMEOUT_MS * 3 }, () => {
  let server: E2eServer;
  let receiver: Receiver;
  let admin: CliUser;
  let tenant: Tenant;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startServer({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32', NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS ?? '' });
    tenant = await createTenant(server.url, await adminToken(server.url), 'notify');
    admin = cliUser({ SVC_BASE_URL: server.url });
    expect((await login(admin, server.url)).exitCode).toBe(0);
    await enableMfa(admin);
  });
  afterAll(async () => {
    admin?.cleanup();
    await server?.stop();
    await receiver?.close();
  });

  it('02§2.4 channels create (secrets from a file), list masked, test against a real receiver, update, delete', async () => {
    const file = path.join(admin.home, 'channel.json');
    fs.writeFileSync(file, JSON.stringify({ orgId: tenant.orgId, name: 'Ops hook', type: 'webhook', config: { url: `${receiver.url}/ops`, authType: 'bearer', authToken: 'cli-secret' } }));
    const created = await admin.json(['alerts', 'channels', 'create', '--from-file', file]);
    expect(created.config.authToken).toEqual({ redacted: true, hasSecret: true, masked: '********' });
    const listed = await admin.json(['alerts', 'channels', 'list', '--org-id', tenant.orgId]);
    expect(listed.map((c: { id: string }) => c.id)).toContain(created.id);
    const tested = await admin.json(['alerts', 'channels', 'test', created.id]);
    expect(tested.testResult.success).toBe(true);
    expect(receiver.received.at(-1)?.headers.authorization).toBe('Bearer cli-secret');
    const updated = await admin.json(['alerts', 'channels', 'update', created.id, '--no-enabled']);
    expect(updated.enabled).toBe(false);
    const bad = await admin.run(['alerts', 'channels', 'create', '--org-id', tenant.orgId, '--name', 'x', '--type', 'email', '--config', '{"recipients":["nope"]}']);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(/Invalid email channel configuration/);
    expect((await admin.json(['alerts', 'channels', 'delete', created.id, '--yes'])).success).toBe(true);
  });

  it('02§2.6 policies create, get, update, delete', async () => {
    const channel = await admin.json(['alerts', 'channels', 'create', '--org-id', tenant.orgId, '--name', 'Mail', '--type', 'email', '--config', '{"to":"ops@example.com"}']);
    const file = path.join(admin.home, 'policy.json');
    fs.writeFileSync(file, JSON.stringify({ orgId: tenant.orgId, name: 'Night', steps: [{ delayMinutes: 15, channelIds: [channel.id] }] }));
    const policy = await admin.json(['alerts', 'policies', 'create', '--from-file', file]);
    expect(policy.steps).toEqual([{ delayMinutes: 15, channelIds: [channel.id] }]);
    expect((await admin.json(['alerts', 'policies', 'get', policy.id])).name).toBe('Night');
    expect((await admin.json(['alerts', 'policies', 'update', policy.id, '--name', 'Weekend'])).name).toBe('Weekend');
    expect((await admin.json(['alerts', 'policies', 'list', '--org-id', tenant.orgId])).map((p: { id: string }) => p.id)).toEqual([policy.id]);
    expect((await admin.json(['alerts', 'policies', 'delete', policy.id, '--yes'])).success).toBe(true);
    // The steps as a flag: a JSON array (a list of objects has no comma form).
    const steps = [{ delayMinutes: 5, channelIds: [channel.id] }, { delayMinutes: 30, channelIds: [channel.id] }];
    const flagged = await admin.json(['alerts', 'policies', 'create', '--org-id', tenant.orgId, '--name', 'Day', '--steps', JSON.stringify(steps)]);
    expect(flagged.steps).toEqual(steps);
  });

  it('02§4.2 notifications count, list, read --all, delete --all', async () => {
    expect(await admin.json(['notifications', 'count'])).toEqual({ count: 0 });
    expect(await admin.json(['notifications', 'list'])).toEqual([]);
    expect((await admin.json(['notifications', 'read', '--all'])).success).toBe(true);
    expect((await admin.json(['notifications', 'delete', '--all', '--yes'])).success).toBe(true);
    const neither = await admin.run(['notifications', 'read']);
    expect(neither.exitCode).not.toBe(0);
  });
});
