import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliUser, E2E_TIMEOUT_MS, http } from '../helpers/cli.js';
import { signedInServer } from '../helpers/fixtures.js';

// The tests are independent and run concurrently (this machine runs one test file at a time).
describe('e2e: svc api, the raw escape hatch (CLI.md "Scripting conveniences")', { timeout: E2E_TIMEOUT_MS }, () => {
  const shared = signedInServer();
  beforeAll(async () => {
    const { token } = shared;
    await Promise.all(Array.from({ length: 12 }, (_, i) => http(shared.url, 'POST', '/orgs/partners', { token, body: { name: `Seed ${i}`, slug: `seed-${i}` } })));
  });

  it.concurrent('-X POST with -f string fields creates, with the session of the profile', async () => {
    const result = await shared.user.run(['api', '-X', 'POST', '/orgs/partners', '-f', 'name=X', '-f', 'slug=x']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ name: 'X', slug: 'x', status: 'active' });
  });

  it.concurrent('-F sends typed values and nested keys; METHOD may be the first argument; the /api/v1 prefix is optional', async () => {
    const result = await shared.user.run(['api', 'POST', '/api/v1/orgs/partners', '-f', 'name=Typed', '-f', 'slug=typed', '-F', 'maxDevices=250', '-F', 'billingEmail=null', '-f', 'settings[timezone]=Europe/Berlin']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ slug: 'typed', maxDevices: 250, billingEmail: null, settings: { timezone: 'Europe/Berlin' } });
  });

  // A writer slower than the CLI's start (`jq … | svc api … --input -`): the CLI's first look at stdin (is it a
  // terminal?) makes the pipe non-blocking, and a synchronous read of it failed with EAGAIN.
  it.concurrent('--input - and -F key=@- wait for a slow writer on stdin', async () => {
    const later = (text: string) => {
      const stream = new PassThrough();
      setTimeout(() => stream.end(text), 700);
      return stream;
    };
    const input = await shared.user.run(['api', 'POST', 'orgs/partners', '--input', '-'], { input: later(JSON.stringify({ name: 'Slow', slug: 'slow' })) });
    expect(input.exitCode, input.stderr).toBe(0);
    expect(JSON.parse(input.stdout).slug).toBe('slow');
    const field = await shared.user.run(['api', 'POST', 'orgs/partners', '-f', 'slug=slow-field', '-F', 'name=@-'], { input: later('Slow field') });
    expect(field.exitCode, field.stderr).toBe(0);
    expect(JSON.parse(field.stdout)).toMatchObject({ slug: 'slow-field', name: 'Slow field' });
  });

  it.concurrent('--input - sends a JSON body from stdin', async () => {
    const result = await shared.user.run(['api', 'POST', 'orgs/partners', '--input', '-'], { input: JSON.stringify({ name: 'Piped', slug: 'piped' }) });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).slug).toBe('piped');
  });

  // Not concurrent: partners created by other tests while paging would shift offset pages.
  it('--paginate follows the {data, pagination} envelope into one JSON array', async () => {
    const result = await shared.user.run(['api', 'GET', '/orgs/partners', '--paginate', '-f', 'limit=5']);
    expect(result.exitCode).toBe(0);
    const all = JSON.parse(result.stdout);
    expect(Array.isArray(all)).toBe(true);
    expect(all.length).toBeGreaterThanOrEqual(12);
    expect(new Set(all.map((p: { id: string }) => p.id)).size).toBe(all.length);
  });

  it.concurrent('--paginate with -o jsonl streams one object per line (and implies GET, fields or not)', async () => {
    const result = await shared.user.run(['api', '/orgs/partners', '-f', 'limit=4', '--paginate', '--output', 'jsonl']);
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(12);
    expect(JSON.parse(lines[0] ?? '')).toHaveProperty('slug');
  });

  it.concurrent('without --paginate the body prints as it is', async () => {
    const page = JSON.parse((await shared.user.run(['api', 'GET', '/orgs/partners', '-f', 'limit=2'])).stdout);
    expect(page.data).toHaveLength(2);
    expect(page.pagination).toMatchObject({ page: 1, limit: 2 });
  });

  it.concurrent('non-2xx answers take the same error path and exit codes (404 → 5, 409 → 6, 401 → 3)', async () => {
    const missing = await shared.user.run(['api', '/orgs/partners/00000000-0000-4000-8000-000000000000']);
    expect(missing.exitCode).toBe(5);
    expect(missing.stdout).toBe('');
    expect((await shared.user.run(['api', '-X', 'POST', '/orgs/partners', '-f', 'name=Dup', '-f', 'slug=dup'])).exitCode).toBe(0);
    const taken = await shared.user.run(['api', '-X', 'POST', '/orgs/partners', '-f', 'name=Dup', '-f', 'slug=dup']);
    expect(taken.exitCode).toBe(6);
    expect(taken.stderr).toContain('HTTP 409');
    const stranger = cliUser();
    const anonymous = await stranger.run(['api', '/orgs/partners', '--base-url', shared.url]);
    stranger.cleanup();
    expect(anonymous.exitCode).toBe(3);
  });

  it.concurrent('usage errors are exit 2 before any request', async () => {
    expect((await shared.user.run(['api', 'FETCH', '/orgs/partners'])).exitCode).toBe(2);
    expect((await shared.user.run(['api', '/orgs/partners', '-f', 'novalue'])).exitCode).toBe(2);
    expect((await shared.user.run(['api', 'POST', '/orgs/partners', '--paginate'])).exitCode).toBe(2);
  });

  it.concurrent('--dry-run prints the request and sends nothing', async () => {
    const file = path.join(shared.user.home, 'body.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'Never', slug: 'never' }));
    const dry = await shared.user.run(['api', 'POST', '/orgs/partners', '--input', file, '--dry-run']);
    expect(dry.exitCode).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, method: 'POST', url: `${shared.url}/api/v1/orgs/partners`, body: { slug: 'never' } });
    const all = JSON.parse((await shared.user.run(['api', '/orgs/partners', '--paginate'])).stdout);
    expect(all.some((p: { slug: string }) => p.slug === 'never')).toBe(false);
  });

  it.concurrent('/health stays at the root', async () => {
    const health = await shared.user.run(['api', '/health']);
    expect(JSON.parse(health.stdout)).toMatchObject({ status: 'ok' });
  });
});
