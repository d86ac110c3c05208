import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS } from '../helpers/cli.js';
import { outboundTenantWith } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/https-receiver.js';

const SECRET = 'e2e-webhook-secret';

describe('e2e: svc webhooks (02 §4.3, §5; CLI.md "Secrets")', { timeout: E2E_TIMEOUT_MS }, () => {
  const tenant = outboundTenantWith('hooks', startReceiver);

  it('02§4.3 02§5 create with --secret-stdin, test, and verify the received delivery (exit 0; wrong secret exit 1)', async () => {
    const created = await tenant.admin.json(
      ['webhooks', 'create', '--org-id', tenant.orgId, '--name', 'ops', '--url', `${tenant.peer.url}/in`, '--events', 'alert.triggered', '--header', 'X-Team: blue', '--secret-stdin'],
      { input: SECRET },
    );
    expect(created).toMatchObject({ hasSecret: true, status: 'active', headers: [{ key: 'X-Team', value: '********' }] });
    expect(JSON.stringify(created)).not.toContain(SECRET);

    const queued = await tenant.admin.json(['webhooks', 'test', created.id]);
    expect(queued).toMatchObject({ message: 'Test delivery queued', delivery: { status: 'pending', event: 'webhook.test' } });
    const [got] = await tenant.peer.waitFor(1);
    const bodyFile = path.join(tenant.admin.home, 'body.json');
    fs.writeFileSync(bodyFile, got?.body ?? '');
    const args = ['webhooks', 'verify', '--body', bodyFile, '--signature', String(got?.headers['x-svc-signature']), '--timestamp', String(got?.headers['x-svc-signature-timestamp'])];
    const valid = await tenant.admin.run([...args, '--secret-stdin'], { input: SECRET });
    expect(valid.exitCode, valid.stderr).toBe(0);
    const invalid = await tenant.admin.run([...args, '--secret-stdin'], { input: 'not-the-secret' });
    expect(invalid.exitCode).toBe(1);
    expect(invalid.stderr).toContain('signature does not match');
    const stale = await tenant.admin.run(['webhooks', 'verify', '--body', bodyFile, '--signature', String(got?.headers['x-svc-signature']), '--timestamp', '1000', '--secret-stdin'], { input: SECRET });
    expect(stale.exitCode).toBe(1);
    expect(stale.stderr).toContain('tolerance');
    // 02§5 standard input holds one thing: the body or the secret, never both (exit 2, nothing verified).
    for (const secretFlag of [['--secret-stdin'], ['--secret-file', '-']]) {
      const both = await tenant.admin.run(['webhooks', 'verify', '--body', '-', '--signature', 'x', '--timestamp', '1', ...secretFlag], { input: SECRET });
      expect(both.exitCode, both.stderr).toBe(2);
      expect(both.stderr).toContain('cannot both read standard input');
    }

    let deliveries: any[] = [];
    for (let i = 0; i < 50 && deliveries[0]?.status !== 'delivered'; i++) {
      deliveries = await tenant.admin.json(['webhooks', 'deliveries', created.id]);
      if (deliveries[0]?.status !== 'delivered') await new Promise((r) => setTimeout(r, 100));
    }
    expect(deliveries[0]).toMatchObject({ status: 'delivered', attempt: 1, responseStatus: 200 });
  });

  it('02§4.3 a secret is never taken from argv; update, rotate-secret, get, list and delete', async () => {
    const argv = await tenant.admin.run(['webhooks', 'create', '--org-id', tenant.orgId, '--name', 'x', '--url', `${tenant.peer.url}/x`, '--events', '*', '--secret', SECRET]);
    expect(argv.exitCode).toBe(2);
    const created = await tenant.admin.json(['webhooks', 'create', '--org-id', tenant.orgId, '--name', 'x', '--url', `${tenant.peer.url}/x`, '--events', '*', '--secret-stdin'], { input: SECRET });
    expect((await tenant.admin.json(['webhooks', 'update', created.id, '--status', 'paused'])).status).toBe('paused');
    const rotated = await tenant.admin.json(['webhooks', 'rotate-secret', created.id, '--secret-stdin', '--overlap-seconds', '60', '--yes'], { input: 'next-secret' });
    expect(rotated.previousSecretExpiresAt).not.toBeNull();
    expect((await tenant.admin.json(['webhooks', 'get', created.id])).deliveryStats).toMatchObject({ total: 0 });
    expect((await tenant.admin.json(['webhooks', 'list', '--status', 'paused'])).map((h: any) => h.id)).toContain(created.id);
    expect(await tenant.admin.json(['webhooks', 'delete', created.id, '--yes'])).toEqual({ success: true });
    expect((await tenant.admin.run(['webhooks', 'get', created.id])).exitCode).toBe(5);
  });
});
