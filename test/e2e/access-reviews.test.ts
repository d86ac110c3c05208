import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import AccessReviewsGet from '../../src/commands/access-reviews/get.js';
import { cliUser, E2E_TIMEOUT_MS, http } from '../helpers/cli.js';
import { createTenant, invite, invitePerson, ok, sharedServer } from '../helpers/fixtures.js';

interface Item {
  id: string;
  userEmail: string;
  decision: string;
  notes: string | null;
}

describe('e2e: access reviews (01 §4.8; CLI.md "Output", exit codes)', { timeout: E2E_TIMEOUT_MS }, () => {
  const shared = sharedServer();

  /**
   * Each test's own partner: a Partner Admin who reviews (MFA on; the CLI carries the session in SVC_TOKEN), and
   * two more people invited with partner roles.
   */
  const world = async () => {
    const tenant = await createTenant(shared.url, shared.token, 'reviewed');
    const at = (name: string) => `${name}@${tenant.slug}.test`;
    const lead = await invitePerson(shared.url, shared.token, tenant.partnerId, { email: at('lead') });
    await Promise.all([
      invite(shared.url, shared.token, tenant.partnerId, at('tech'), 'Partner Technician'),
      invite(shared.url, shared.token, tenant.partnerId, at('viewer'), 'Partner Viewer'),
    ]);
    const reviewer = shared.track(lead.cli);
    const write = (name: string, text: string) => {
      const file = path.join(reviewer.home, name);
      fs.writeFileSync(file, text);
      return file;
    };
    return { reviewer, lead, at, write };
  };
  /** A world with a pending review of its three people, created over HTTP. */
  const withReview = async () => {
    const w = await world();
    const { id } = await ok<{ id: string }>(
      http(shared.url, 'POST', '/access-reviews', { token: w.lead.token, body: { name: 'Q1 2026', dueDate: '2026-03-31' } }),
      'create review',
    );
    const currentItems = async () => (await w.reviewer.json<{ items: Item[] }>(['access-reviews', 'get', id])).items;
    return { ...w, reviewId: id, items: await currentItems(), currentItems };
  };

  it('01§4.8 create -q prints the id; list shows the review', async () => {
    const { reviewer } = await world();
    const created = await reviewer.run([
      'access-reviews',
      'create',
      '--name',
      'Q1 2026',
      '--due-date',
      '2026-03-31',
      '-q',
    ]);
    expect(created.exitCode).toBe(0);
    const reviewId = created.stdout;
    expect(reviewId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await reviewer.json(['access-reviews', 'list'])).toMatchObject([
      { id: reviewId, name: 'Q1 2026', status: 'pending', dueDate: expect.stringContaining('2026-03-31') },
    ]);
  });

  it('auditors: get -o csv prints one row per item with the header once; json the whole review; jsonl one item per line', async () => {
    const { reviewer, reviewId, at } = await withReview();
    const [csv, json, jsonl] = await Promise.all(
      ['csv', 'json', 'jsonl'].map((format) => reviewer.run(['access-reviews', 'get', reviewId, '--output', format])),
    );
    const review = JSON.parse(json?.stdout ?? '');
    const items: Item[] = review.items;
    expect(review).toMatchObject({ id: reviewId, name: 'Q1 2026', status: 'pending' });
    expect(items.map((i) => i.userEmail).sort()).toEqual([at('lead'), at('tech'), at('viewer')]);

    expect(csv?.exitCode).toBe(0);
    const rows: string[][] = parse(csv?.stdout ?? '');
    // The header is the command's columns, once, each a field of the review's items.
    expect(rows[0]).toEqual(AccessReviewsGet.columns);
    expect(Object.keys(items[0] ?? {})).toEqual(expect.arrayContaining(rows[0] ?? ['(no header)']));
    expect(rows.slice(1).map((r) => r[0])).toEqual(items.map((i) => i.id));
    expect(rows.slice(1).every((r) => r[5] === 'pending')).toBe(true);
    expect(rows.filter((r) => r[0] === 'id')).toHaveLength(1);

    expect((jsonl?.stdout ?? '').split('\n').map((l) => JSON.parse(l).id)).toEqual(items.map((i) => i.id));
  });

  it('decide --from-file: an invalid file exits 2 listing every bad row by line, and applies nothing', async () => {
    const { reviewer, reviewId, items, write, currentItems } = await withReview();
    const [a, b, c] = items;
    const badColumns = await reviewer.run([
      'access-reviews',
      'decide',
      reviewId,
      '--from-file',
      write('columns.csv', `itemId,decison\n${a?.id},approved\n`),
    ]);
    expect(badColumns.exitCode).toBe(2);
    expect(badColumns.stderr).toContain('unknown column "decison"');
    expect(badColumns.stderr).toContain('missing column "decision"');

    const badRows = write(
      'bad.csv',
      [
        'itemId,decision,notes',
        `${a?.id},maybe,`,
        `${b?.id},approved,fine`,
        `${b?.id},revoked,`,
        '00000000-0000-4000-8000-000000000000,approved,',
        `${c?.id},approved,ok`,
      ].join('\n'),
    );
    const result = await reviewer.run(['access-reviews', 'decide', reviewId, '--from-file', badRows]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('3 problems, nothing was sent');
    expect(result.stderr).toMatch(/line 2: decision must be one of pending, approved, revoked, got "maybe"/);
    expect(result.stderr).toMatch(/line 4: item \S+ appears again \(first on line 3\)/);
    expect(result.stderr).toMatch(/line 5: item 00000000-0000-4000-8000-000000000000 is not in this review/);
    expect((await currentItems()).every((i) => i.decision === 'pending')).toBe(true);
  });

  it('decide --from-file with a valid file applies every row and reports each outcome; --item decides one', async () => {
    const { reviewer, reviewId, items, write, currentItems, at } = await withReview();
    const viewer = items.find((i) => i.userEmail === at('viewer'));
    const others = items.filter((i) => i !== viewer);
    const file = write(
      'decisions.csv',
      [
        'itemId,decision,notes',
        `${viewer?.id},revoked,"Left the team, ""moved"" to sales"`,
        ...others.map((i) => `${i.id},approved,`),
      ].join('\r\n'),
    );
    const dry = await reviewer.json<{ dryRun: boolean; method: string }[]>([
      'access-reviews',
      'decide',
      reviewId,
      '--from-file',
      file,
      '--dry-run',
    ]);
    expect(dry).toHaveLength(3);
    expect(dry.every((r) => r.dryRun && r.method === 'PATCH')).toBe(true);
    expect((await currentItems()).every((i) => i.decision === 'pending')).toBe(true);

    const applied = await reviewer.run(['access-reviews', 'decide', reviewId, '--from-file', file, '--output', 'json']);
    expect(applied.exitCode).toBe(0);
    expect(JSON.parse(applied.stdout)).toEqual([
      { itemId: viewer?.id, decision: 'revoked', status: 'ok' },
      ...others.map((i) => ({ itemId: i.id, decision: 'approved', status: 'ok' })),
    ]);
    const after = await currentItems();
    expect(after.find((i) => i.id === viewer?.id)).toMatchObject({
      decision: 'revoked',
      notes: 'Left the team, "moved" to sales',
    });

    const one = await reviewer.json([
      'access-reviews',
      'decide',
      reviewId,
      '--item',
      others[0]?.id ?? '',
      '--decision',
      'approved',
      '--notes',
      'Still leads',
    ]);
    expect(one).toMatchObject({ id: others[0]?.id, decision: 'approved', notes: 'Still leads' });
    expect((await reviewer.run(['access-reviews', 'decide', reviewId, '--item', others[0]?.id ?? ''])).exitCode).toBe(
      2,
    );
  });

  it('complete confirms (exit 2 without --yes), then revokes; a completed review refuses decisions (exit 6)', async () => {
    const { reviewer, reviewId, items, write, at, lead } = await withReview();
    // The viewer revoked, the others approved, over HTTP.
    for (const item of items) {
      const decision = item.userEmail === at('viewer') ? 'revoked' : 'approved';
      await ok(
        http(shared.url, 'PATCH', `/access-reviews/${reviewId}/items/${item.id}`, { token: lead.token, body: { decision } }),
        'decide',
      );
    }
    const refused = await reviewer.run(['access-reviews', 'complete', reviewId]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--yes');
    const done = await reviewer.json(['access-reviews', 'complete', reviewId, '--yes']);
    expect(done).toMatchObject({ id: reviewId, status: 'completed', revokedCount: 1 });

    const file = write('late.csv', `itemId,decision\n${items[0]?.id},approved\n`);
    const [late, single] = await Promise.all([
      reviewer.run(['access-reviews', 'decide', reviewId, '--from-file', file]),
      reviewer.run(['access-reviews', 'decide', reviewId, '--item', items[0]?.id ?? '', '--decision', 'revoked']),
    ]);
    expect(late.exitCode).toBe(6);
    expect(single.exitCode).toBe(6);
    // The revoked user left the partner: its own users list no longer has them.
    const left = await reviewer.json<{ email: string }[]>(['users', 'list']);
    expect(left.map((u) => u.email).sort()).toEqual([at('lead'), at('tech')]);
  });

  it('decide --from-file: when some rows are refused, every outcome is printed and the exit code is 9 (partial); a 403 on the first row stops at once', async () => {
    // A stand-in server that refuses chosen items, as a real one would refuse a concurrent change.
    const ids = [
      '11111111-1111-4111-8111-111111111111',
      '22222222-2222-4222-8222-222222222222',
      '33333333-3333-4333-8333-333333333333',
    ];
    let refuse = new Map<string, [number, string]>();
    const patched: string[] = [];
    const fake = createServer((req, res) => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const itemId = /\/items\/([^/?]+)/.exec(req.url ?? '')?.[1];
      if (req.method === 'GET')
        return send(200, {
          id: ids[0],
          name: 'Fake',
          status: 'in_progress',
          items: ids.map((id) => ({ id, decision: 'pending' })),
        });
      patched.push(itemId ?? '');
      const refusal = refuse.get(itemId ?? '');
      if (refusal) return send(refusal[0], { error: 'Refused', code: refusal[1] });
      return send(200, { id: itemId, decision: 'approved', notes: null, reviewedAt: new Date().toISOString() });
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    const user = cliUser();
    try {
      const file = path.join(user.home, 'fake.csv');
      fs.writeFileSync(file, ['itemId,decision', ...ids.map((id) => `${id},approved`)].join('\n'));
      const run = () =>
        user.run(
          ['access-reviews', 'decide', ids[0] ?? '', '--from-file', file, '--output', 'json', '--retries', '1'],
          { env: { SVC_TOKEN: 'x', SVC_BASE_URL: base } },
        );

      refuse = new Map([[ids[1] ?? '', [409, 'ITEM_CHANGED']]]);
      const partial = await run();
      expect(partial.exitCode).toBe(9);
      expect(JSON.parse(partial.stdout)).toEqual([
        { itemId: ids[0], decision: 'approved', status: 'ok' },
        { itemId: ids[1], decision: 'approved', status: 'error', error: 'Refused (ITEM_CHANGED, HTTP 409)' },
        { itemId: ids[2], decision: 'approved', status: 'ok' },
      ]);
      expect(partial.stderr).toContain('1 of 3 decisions failed');

      refuse = new Map(ids.map((id) => [id, [409, 'ITEM_CHANGED']]));
      const none = await run();
      expect(none.exitCode).toBe(6);
      expect(JSON.parse(none.stdout).every((o: { status: string }) => o.status === 'error')).toBe(true);

      refuse = new Map([[ids[0] ?? '', [403, 'MFA_REQUIRED']]]);
      patched.length = 0;
      const forbidden = await run();
      expect(forbidden.exitCode).toBe(4);
      expect(forbidden.stdout).toBe('');
      expect(forbidden.stderr).toContain('svc mfa setup');
      expect(patched).toEqual([ids[0]]);
    } finally {
      user.cleanup();
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});
