import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS } from '../helpers/cli.js';
import { outboundTenantWith } from '../helpers/fixtures.js';
import { startPsaStandIn } from '../helpers/psa-standin.js';

describe('e2e: svc psa (02 §2.8, §4.4; CLI.md "Secrets")', { timeout: E2E_TIMEOUT_MS }, () => {
  const tenant = outboundTenantWith('psa', () => startPsaStandIn('zendesk'));

  it('02§4.4 create with --credentials-stdin, test, status, sync to completed, tickets, delete; credentials never printed', async () => {
    const token = tenant.peer.credentials.apiToken ?? '';
    const created = await tenant.admin.json(
      ['psa', 'connections', 'create', '--org-id', tenant.orgId, '--provider', 'zendesk', '--name', 'Helpdesk', '--settings', '{"autoCreateTickets":true}', '--credentials-stdin'],
      { input: JSON.stringify(tenant.peer.credentials) },
    );
    expect(created).toMatchObject({ provider: 'zendesk', name: 'Helpdesk', hasCredentials: true, settings: { autoCreateTickets: true } });
    expect(JSON.stringify(created)).not.toContain(token);

    expect(await tenant.admin.json(['psa', 'connections', 'test', created.id])).toEqual({ success: true, message: 'Credentials verified' });
    const got = await tenant.admin.json(['psa', 'connections', 'get', created.id]);
    expect(got).toMatchObject({ id: created.id, testStatus: 'verified' });
    expect(JSON.stringify(got)).not.toContain(token);
    expect((await tenant.admin.json(['psa', 'connections', 'list', '--provider', 'zendesk'])).map((c: { id: string }) => c.id)).toEqual([created.id]);
    expect(await tenant.admin.json(['psa', 'connections', 'status', created.id, '--status', 'paused'])).toEqual({ success: true, status: 'paused' });

    expect(await tenant.admin.json(['psa', 'connections', 'sync', created.id])).toMatchObject({ id: created.id, provider: 'zendesk', status: 'queued' });
    let status = '';
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      status = (await tenant.admin.json(['psa', 'connections', 'get', created.id])).lastSyncStatus;
      if (status !== 'completed') await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('completed');
    expect(await tenant.admin.json(['psa', 'tickets', 'list', '--connection', created.id])).toEqual([]);
    expect(await tenant.admin.json(['psa', 'tickets', 'list'])).toEqual([]);

    expect(await tenant.admin.json(['psa', 'connections', 'delete', created.id, '--yes'])).toEqual({ success: true });
    expect((await tenant.admin.run(['psa', 'connections', 'get', created.id])).exitCode).toBe(5);
  });

  it('02§2.8 credentials are never taken from argv; a file that is not a JSON object is a usage error (exit 2); update reads a file', async () => {
    const argv = await tenant.admin.run(['psa', 'connections', 'create', '--org-id', tenant.orgId, '--provider', 'jira', '--name', 'x', '--credentials', '{"apiToken":"t"}']);
    expect(argv.exitCode).toBe(2);
    const bad = path.join(tenant.admin.home, 'bad.json');
    fs.writeFileSync(bad, '["not", "an", "object"]');
    const refused = await tenant.admin.run(['psa', 'connections', 'create', '--org-id', tenant.orgId, '--provider', 'jira', '--name', 'x', '--credentials-file', bad]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('must be a JSON object');
    const created = await tenant.admin.json(['psa', 'connections', 'create', '--org-id', tenant.orgId, '--provider', 'zendesk', '--name', 'later']);
    expect(created.hasCredentials).toBe(false);
    // 05-wire-notes: nothing stored → 400, exit 6 (a business-rule refusal).
    const nothing = await tenant.admin.run(['psa', 'connections', 'test', created.id]);
    expect(nothing.exitCode, nothing.stderr).toBe(6);
    expect(nothing.stderr).toContain('PSA connection has no usable credentials');
    const file = path.join(tenant.admin.home, 'zendesk.json');
    fs.writeFileSync(file, JSON.stringify(tenant.peer.credentials));
    expect((await tenant.admin.json(['psa', 'connections', 'update', created.id, '--credentials-file', file])).hasCredentials).toBe(true);
    expect((await tenant.admin.json(['psa', 'connections', 'test', created.id])).success).toBe(true);
  });
});
