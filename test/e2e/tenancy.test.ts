import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { ANSI, E2E_TIMEOUT_MS, http } from '../helpers/cli.js';
import { signedInServer } from '../helpers/fixtures.js';

const MISSING = '00000000-0000-4000-8000-000000000000';

// After the first test, the tests run concurrently (this machine runs one test file at a time): each one
// works on tenants of its own, seeded over HTTP where the CLI is not what is under test.
describe('e2e: partners, organizations and sites (CLI.md "Output", "Safety", exit codes)', { timeout: E2E_TIMEOUT_MS }, () => {
  const shared = signedInServer();
  let token: string;
  let partnerId: string;
  let orgId: string;
  beforeAll(() => {
    token = shared.token;
  });

  let seq = 0;
  const seedOrg = async () => {
    const n = ++seq;
    const partner = await http(shared.url, 'POST', '/orgs/partners', { token, body: { name: `Seeded ${n}`, slug: `seeded-${n}` } });
    const org = await http(shared.url, 'POST', '/orgs/organizations', { token, body: { partnerId: partner.body.id, name: `Org ${n}`, slug: `org-${n}` } });
    return { partnerId: partner.body.id as string, orgId: org.body.id as string };
  };
  const partnersWithSlug = async (slug: string) =>
    ((await http(shared.url, 'GET', '/orgs/partners?limit=100', { token })).body.data as { slug: string }[]).filter((p) => p.slug === slug).length;

  it('CLI.md output: -q prints the new id only, and messages stay off stdout', async () => {
    const partner = await shared.user.run(['partners', 'create', '--name', 'Acme MSP', '--slug', 'acme', '--quiet']);
    expect(partner.exitCode).toBe(0);
    partnerId = partner.stdout.trim();
    expect(partnerId).toMatch(/^[0-9a-f-]{36}$/);
    const org = await shared.user.run(['orgs', 'create', '--partner-id', partnerId, '--name', 'Contoso', '--slug', 'contoso', '-q']);
    expect(org.exitCode).toBe(0);
    orgId = org.stdout.trim();
    const site = await shared.user.run(['sites', 'create', '--org-id', orgId, '--name', 'HQ', '--timezone', 'Europe/Berlin', '--output', 'json']);
    expect(JSON.parse(site.stdout)).toMatchObject({ orgId, name: 'HQ', timezone: 'Europe/Berlin' });
    expect(site.stderr).toBe('');
  });

  it.concurrent('CLI.md output: JSON is the API objects as they are (a list prints an array)', async () => {
    const cli = await shared.user.json(['orgs', 'list', '--partner-id', partnerId]);
    const api = await http(shared.url, 'GET', `/orgs/organizations?partnerId=${partnerId}`, { token });
    expect(cli).toEqual(api.body.data);
    expect(cli).toHaveLength(1);
  });

  it.concurrent('CLI.md output: tables with default columns, --columns and --no-headers', async () => {
    const [picked, headed] = await Promise.all([
      shared.user.run(['sites', 'list', '--org-id', orgId, '--output', 'table', '--columns', 'name,timezone', '--no-headers']),
      shared.user.run(['orgs', 'list', '--partner-id', partnerId, '--output', 'table']),
    ]);
    expect(picked.stdout.trimEnd().split('\n').map((l) => l.split(/\s{2,}/))).toEqual([['HQ', 'Europe/Berlin']]);
    const [header, row] = headed.stdout.split('\n');
    expect(header?.split(/\s+/)).toEqual(['id', 'name', 'slug', 'partnerId', 'type', 'status', 'createdAt']);
    expect(row).toContain('Contoso');
  });

  it.concurrent('CLI.md output: csv, yaml and jsonl', async () => {
    const [csv, yaml, jsonl] = await Promise.all(['csv', 'yaml', 'jsonl'].map((format) => shared.user.run(['sites', 'list', '--org-id', orgId, '--output', format])));
    expect(csv?.stdout.split('\n')[0]).toBe('id,name,orgId,timezone,createdAt');
    expect(csv?.stdout.split('\n')[1]).toContain(',HQ,');
    expect(parseYaml(yaml?.stdout ?? '')).toMatchObject([{ name: 'HQ', orgId }]);
    expect((jsonl?.stdout ?? '').trimEnd().split('\n').map((l) => JSON.parse(l).name)).toEqual(['HQ']);
  });

  it.concurrent('CLI.md output: --all follows every page past 100 rows (collected for json, streamed for jsonl)', async () => {
    const { orgId: manyOrg } = await seedOrg();
    // Seeded over HTTP: a CLI process per row would take a minute.
    for (let batch = 0; batch < 4; batch++) {
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => http(shared.url, 'POST', '/orgs/sites', { token, body: { orgId: manyOrg, name: `site-${String(batch * 30 + i).padStart(3, '0')}` } })),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
    }
    const [all, page, streamed, ids] = await Promise.all([
      shared.user.json(['sites', 'list', '--org-id', manyOrg, '--all']),
      shared.user.json(['sites', 'list', '--org-id', manyOrg]),
      shared.user.run(['sites', 'list', '--org-id', manyOrg, '--all', '--limit', '40', '--output', 'jsonl']),
      shared.user.run(['sites', 'list', '--org-id', manyOrg, '--all', '-q']),
    ]);
    expect(all).toHaveLength(120);
    expect(new Set(all.map((s: { id: string }) => s.id)).size).toBe(120);
    expect(page).toHaveLength(50);
    expect(streamed.stdout.trimEnd().split('\n')).toHaveLength(120);
    expect(ids.stdout.trimEnd().split('\n')).toHaveLength(120);
  });

  it.concurrent('CLI.md exit codes: a bad flag or value is exit 2 before any request', async () => {
    const [unknown, badValue] = await Promise.all([
      shared.user.run(['partners', 'list', '--no-such-flag']),
      shared.user.run(['orgs', 'create', '--name', 'X', '--slug', 'x', '--max-devices', 'lots']),
    ]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('--no-such-flag');
    expect(badValue.exitCode).toBe(2);
    expect(badValue.stderr).toContain('--max-devices');
  });

  it.concurrent('CLI.md safety: delete refuses without --yes off a terminal (exit 2), and deletes with it', async () => {
    const { orgId: own } = await seedOrg();
    const site = await http(shared.url, 'POST', '/orgs/sites', { token, body: { orgId: own, name: 'Doomed' } });
    const refused = await shared.user.run(['sites', 'delete', site.body.id]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await http(shared.url, 'GET', `/orgs/sites/${site.body.id}`, { token })).status).toBe(200);
    expect((await shared.user.run(['sites', 'delete', site.body.id, '--yes'])).exitCode).toBe(0);
    const gone = await shared.user.run(['sites', 'get', site.body.id]);
    expect(gone.exitCode).toBe(5);
  });

  it.concurrent('CLI.md exit codes: 404 is exit 5, a taken slug (409) is exit 6', async () => {
    const [missing, taken] = await Promise.all([shared.user.run(['partners', 'get', MISSING]), shared.user.run(['partners', 'create', '--name', 'Again', '--slug', 'acme'])]);
    expect(missing.exitCode).toBe(5);
    expect(missing.stderr).toMatch(/HTTP 404/);
    expect(taken.exitCode).toBe(6);
    expect(taken.stderr).toMatch(/SLUG_TAKEN, HTTP 409/);
    expect(taken.stdout).toBe('');
  });

  it.concurrent('CLI.md scripting: --dry-run validates and prints the request, and sends nothing', async () => {
    const [dry, invalid, dryDelete] = await Promise.all([
      shared.user.json(['partners', 'create', '--name', 'Dry', '--slug', 'dry', '--dry-run']),
      shared.user.run(['partners', 'create', '--name', 'Dry', '--slug', 'Not A Slug', '--dry-run']),
      shared.user.run(['orgs', 'delete', orgId, '--dry-run']),
    ]);
    expect(dry).toMatchObject({ dryRun: true, method: 'POST', url: `${shared.url}/api/v1/orgs/partners`, body: { name: 'Dry', slug: 'dry' } });
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toContain('--slug');
    expect(dryDelete.exitCode).toBe(0);
    expect(JSON.parse(dryDelete.stdout)).toMatchObject({ dryRun: true, method: 'DELETE' });
    expect(await partnersWithSlug('dry')).toBe(0);
    expect((await http(shared.url, 'GET', `/orgs/organizations/${orgId}`, { token })).status).toBe(200);
  });

  it.concurrent('CLI.md safety: the same --idempotency-key twice creates one partner', async () => {
    const args = ['partners', 'create', '--name', 'Once', '--slug', 'once', '--idempotency-key', 'e2e-once-1'];
    const first = await shared.user.json(args);
    const second = await shared.user.json(args);
    expect(second.id).toBe(first.id);
    expect(await partnersWithSlug('once')).toBe(1);
  });

  it.concurrent('updates go through the contract-derived flags; --from-file supplies a body that flags override', async () => {
    const { partnerId: own } = await seedOrg();
    const file = path.join(shared.user.home, 'org.yaml');
    fs.writeFileSync(file, 'name: From File\nslug: from-file\nmaxDevices: 10\n');
    const org = await shared.user.json(['orgs', 'create', '--partner-id', own, '--from-file', file, '--max-devices', '25']);
    expect(org).toMatchObject({ name: 'From File', slug: 'from-file', maxDevices: 25, partnerId: own });
    const [updated, accessible] = await Promise.all([
      shared.user.json(['orgs', 'update', org.id, '--status', 'suspended', '--max-devices', 'null']),
      shared.user.json(['orgs', 'list', '--accessible', '--partner-id', own]),
    ]);
    expect(updated).toMatchObject({ status: 'suspended', maxDevices: null });
    const slugs = accessible.map((o: { slug: string }) => o.slug);
    expect(slugs).toHaveLength(2);
    expect(slugs).toContain('from-file');
  });

  it.concurrent('CLI.md output: NO_COLOR means no ANSI escapes in any output, tables and errors included', async () => {
    const env = { NO_COLOR: '1', CI: '' };
    const results = await Promise.all([shared.user.run(['orgs', 'list', '--output', 'table'], { env }), shared.user.run(['partners', 'get', MISSING], { env })]);
    for (const result of results) expect(result.stdout + result.stderr).not.toMatch(ANSI);
  });
});
