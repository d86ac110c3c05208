import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS, http } from '../helpers/cli.js';
import { createTenant, enroll, invitePerson, ok, sharedServer } from '../helpers/fixtures.js';

describe('e2e: filters, groups, tags, search and device lists (02 §4.5, 05 wire notes "4.5", "4.7")', { timeout: E2E_TIMEOUT_MS }, () => {
  const shared = sharedServer();

  it('02§4.5 filters create/preview, groups from a saved filter with members, devices list --filter-id/--where, search', async () => {
    const tenant = await createTenant(shared.url, shared.token, 'filters');
    const person = await invitePerson(shared.url, shared.token, tenant.partnerId);
    shared.track(person.cli);
    const cli = person.cli;
    const key = await ok<{ key: string }>(http(shared.url, 'POST', '/enrollment-keys', { token: person.token, body: { orgId: tenant.orgId, name: 'e2e', maxUsage: 5 } }), 'key');
    for (const [host, osType] of [['web-01', 'windows'], ['web-02', 'linux'], ['desk-01', 'windows']] as const) await ok(enroll(shared.url, key.key, host, osType), 'enroll');

    const tree = JSON.stringify({ operator: 'AND', conditions: [{ field: 'osType', operator: 'equals', value: 'windows' }] });
    const filter = await cli.json(['filters', 'create', '--org-id', tenant.orgId, '--name', 'Windows', '--conditions', tree]);
    expect(filter).toMatchObject({ name: 'Windows', orgId: tenant.orgId });
    const preview = await cli.run(['filters', 'preview', filter.id, '-o', 'json']);
    expect(preview.exitCode).toBe(0);
    expect(JSON.parse(preview.stdout).map((d: any) => d.hostname)).toEqual(['desk-01', 'web-01']);

    const group = await cli.json(['groups', 'create', '--org-id', tenant.orgId, '--name', 'Windows', '--filter-id', filter.id]);
    expect(group).toMatchObject({ type: 'dynamic', deviceCount: 2 });
    const members = await cli.json(['groups', 'members', group.id]);
    expect(members.map((m: any) => m.hostname)).toEqual(['desk-01', 'web-01']);

    expect((await cli.json(['devices', 'list', '--filter-id', filter.id])).map((d: any) => d.hostname)).toEqual(['desk-01', 'web-01']);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-where-')), 'tree.json');
    fs.writeFileSync(file, JSON.stringify({ operator: 'AND', conditions: [{ field: 'hostname', operator: 'startsWith', value: 'web' }] }));
    expect((await cli.json(['devices', 'list', '--where', file])).map((d: any) => d.hostname)).toEqual(['web-01', 'web-02']);

    const bad = await cli.run(['filters', 'create', '--org-id', tenant.orgId, '--name', 'Bad', '--conditions', '{"operator":"AND","conditions":[{"field":"nope","operator":"equals","value":1}]}']);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toContain('Invalid filter');

    const found = await cli.json(['search', 'web-0']);
    expect(found.map((r: any) => r.title)).toEqual(['web-01', 'web-02']);
  });
});
