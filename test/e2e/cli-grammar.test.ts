import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS, http } from '../helpers/cli.js';
import { createTenant, enroll, invitePerson, ok, sharedServer, type Person, type Tenant } from '../helpers/fixtures.js';

/** CLI.md's grammar, lists, files and dry runs on commands whose shapes differ from the common ones: several ids
 * beside flags, comma lists, a one-or-many filter, lists paged by offset, files that do not parse. */
describe('e2e: svc grammar, lists and files against a real server (CLI.md)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  const shared = sharedServer();

  async function tenantWithDevices(prefix: string, hosts: string[]): Promise<{ tenant: Tenant; person: Person; deviceIds: string[] }> {
    const tenant = await createTenant(shared.url, shared.token, prefix);
    const person = await invitePerson(shared.url, shared.token, tenant.partnerId);
    shared.track(person.cli);
    const key = await ok<{ key: string }>(http(shared.url, 'POST', '/enrollment-keys', { token: person.token, body: { orgId: tenant.orgId, name: 'e2e', maxUsage: 10 } }), 'key');
    const deviceIds: string[] = [];
    for (const host of hosts) deviceIds.push((await ok<{ deviceId: string }>(enroll(shared.url, key.key, host), 'enroll')).deviceId);
    return { tenant, person, deviceIds };
  }

  it('CLI.md "Grammar": groups add takes every id after the group, never a flag value; membership-log pages by --page/--limit/--all', async () => {
    const { tenant, person, deviceIds } = await tenantWithDevices('grammar', ['g-01', 'g-02', 'g-03']);
    const [d1, d2, d3] = deviceIds as [string, string, string];
    const cli = person.cli;
    const group = await cli.json(['groups', 'create', '--org-id', tenant.orgId, '--name', 'Static']);
    // Flags and their values between the ids: -o json and --timeout 30 are not device ids.
    const added = await cli.run(['groups', 'add', group.id, d1, '-o', 'json', d2, '--timeout', '30', d3, '--yes']);
    expect(added.exitCode, added.stderr).toBe(0);
    const members = await cli.json<{ deviceId: string }[]>(['groups', 'members', group.id]);
    expect(members.map((m) => m.deviceId).sort()).toEqual([d1, d2, d3].sort());

    // A list paged by offset answers --limit/--page like every other list.
    const all = await cli.json<{ deviceId: string; action: string }[]>(['groups', 'membership-log', group.id, '--all', '--limit', '2']);
    expect(all.map((e) => e.action)).toEqual(['added', 'added', 'added']);
    const second = await cli.json<{ deviceId: string }[]>(['groups', 'membership-log', group.id, '--limit', '2', '--page', '2']);
    expect(second.map((e) => e.deviceId)).toEqual([all[2]?.deviceId]);
    const csv = await cli.run(['groups', 'membership-log', group.id, '--all', '--limit', '1', '-o', 'csv', '--columns', 'action']);
    expect(csv.stdout.trim().split('\n')).toEqual(['action', 'added', 'added', 'added']);
    // notifications list is paged by offset too.
    expect(await cli.json(['notifications', 'list', '--all'])).toEqual([]);
    expect(await cli.json(['notifications', 'list', '--page', '2', '--limit', '5'])).toEqual([]);
  });

  it('CLI.md "Grammar": a comma list fills a delimited flag (scripts run --device A,B); a one-or-many filter takes one value (mobile inbox --status)', async () => {
    const { person, deviceIds } = await tenantWithDevices('commas', ['c-01', 'c-02']);
    const [d1, d2] = deviceIds as [string, string];
    const dry = await person.cli.json(['scripts', 'run', '00000000-0000-4000-8000-000000000001', '--device', `${d1},${d2}`, '--dry-run']);
    expect(dry.body.deviceIds).toEqual([d1, d2]);
    const one = await person.cli.run(['mobile', 'inbox', '--status', 'active', '-o', 'json']);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toEqual([]);
    const two = await person.cli.run(['mobile', 'inbox', '--status', 'active,acknowledged', '-o', 'json']);
    expect(two.exitCode, two.stderr).toBe(0);
    const wrong = await person.cli.run(['mobile', 'inbox', '--status', 'sleeping']);
    expect(wrong.exitCode).toBe(2);
  });

  it('CLI.md "Exit codes": a --where or --from-file that is missing or does not parse is exit 2, and its text is never echoed', async () => {
    const { tenant, person } = await tenantWithDevices('files', ['web-01', 'db-01']);
    const cli = person.cli;
    const missing = await cli.run(['devices', 'list', '--where', path.join(cli.home, 'nope.json')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('Cannot read --where');
    const broken = path.join(cli.home, 'broken.yaml');
    fs.writeFileSync(broken, 'operator: AND sk_live_not_for_stderr\n  conditions: [x\n');
    const bad = await cli.run(['devices', 'list', '--where', broken]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('is not JSON or YAML');
    expect(bad.stderr).toMatch(/line \d+, column \d+/);
    expect(bad.stderr).not.toContain('sk_live_not_for_stderr');
    const settings = path.join(cli.home, 'settings.yaml');
    fs.writeFileSync(settings, 'name: Hook\nconfig: {url: "https://hooks.example.com/sk_live_not_for_stderr", b\n');
    const badSettings = await cli.run(['alerts', 'channels', 'create', '--from-file', settings, '--dry-run']);
    expect(badSettings.exitCode).toBe(2);
    expect(badSettings.stderr).not.toContain('sk_live_not_for_stderr');
    // YAML works as well as JSON.
    const tree = path.join(cli.home, 'tree.yaml');
    fs.writeFileSync(tree, `operator: AND\nconditions:\n  - {field: hostname, operator: startsWith, value: web}\n`);
    expect((await cli.json<{ hostname: string }[]>(['devices', 'list', '--where', tree, '--org-id', tenant.orgId])).map((d) => d.hostname)).toEqual(['web-01']);
  });

  it('CLI.md "Scripting conveniences": --dry-run redacts what a channel config holds as secrets, from a file as from flags', async () => {
    const tenant = await createTenant(shared.url, shared.token, 'dryrun');
    const person = await invitePerson(shared.url, shared.token, tenant.partnerId);
    shared.track(person.cli);
    const file = path.join(person.cli.home, 'hook.json');
    const config = { url: 'https://hooks.example.com/T0/B0/sekrit-path', authType: 'api_key', apiKeyHeader: 'X-Api-Key', apiKeyValue: 'kv-sekrit', headers: { 'X-Custom': 'hdr-sekrit' } };
    fs.writeFileSync(file, JSON.stringify({ orgId: tenant.orgId, name: 'Hook', type: 'webhook', config }));
    const hook = await person.cli.run(['alerts', 'channels', 'create', '--from-file', file, '--dry-run', '-o', 'json']);
    expect(hook.exitCode, hook.stderr).toBe(0);
    expect(hook.stdout).not.toMatch(/sekrit/);
    expect(JSON.parse(hook.stdout).body.config).toMatchObject({ url: '[redacted]', apiKeyValue: '[redacted]', headers: { 'X-Custom': '[redacted]' }, apiKeyHeader: 'X-Api-Key' });
    const slack = await person.cli.run([
      'alerts', 'channels', 'create', '--org-id', tenant.orgId, '--name', 'Chat', '--type', 'slack',
      '--config', '{"webhookUrl":"https://hooks.slack.example/services/sekrit"}', '--dry-run', '-o', 'json',
    ]);
    expect(slack.exitCode, slack.stderr).toBe(0);
    expect(slack.stdout).not.toMatch(/sekrit/);
  });

  it('01 "Idempotency": filters create and groups create replay a repeated --idempotency-key instead of creating twice', async () => {
    const tenant = await createTenant(shared.url, shared.token, 'idem');
    const person = await invitePerson(shared.url, shared.token, tenant.partnerId);
    shared.track(person.cli);
    const tree = JSON.stringify({ operator: 'AND', conditions: [{ field: 'osType', operator: 'equals', value: 'windows' }] });
    const filter = ['filters', 'create', '--org-id', tenant.orgId, '--name', 'Windows', '--conditions', tree, '--idempotency-key', 'filter-once'];
    const first = await person.cli.json(filter);
    expect((await person.cli.json(filter)).id).toBe(first.id);
    expect(await person.cli.json<unknown[]>(['filters', 'list', '--org-id', tenant.orgId])).toHaveLength(1);
    const group = ['groups', 'create', '--org-id', tenant.orgId, '--name', 'Once', '--idempotency-key', 'group-once'];
    const made = await person.cli.json(group);
    expect((await person.cli.json(group)).id).toBe(made.id);
    expect(await person.cli.json<unknown[]>(['groups', 'list', '--org-id', tenant.orgId])).toHaveLength(1);
  });
});
