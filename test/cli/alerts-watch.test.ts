import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliUser, E2E_TIMEOUT_MS } from '../helpers/cli.js';

/**
 * `svc alerts watch` against a stand-in of GET /alerts (loopback): a burst of changes larger than many pages, in
 * the API's order (by trigger time, not by change), must all be printed. The real server is exercised by
 * test/e2e/alerts-watch.test.ts; a burst of thousands of alerts there would cost minutes.
 */
const BURST = 1_234;
const alerts = Array.from({ length: BURST }, (_, i) => ({
  id: `a${String(i).padStart(5, '0')}`,
  status: 'active',
  severity: 'high',
  title: `alert ${i}`,
  triggeredAt: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  updatedAt: new Date(Date.UTC(2026, 0, 2) + i * 1000).toISOString(),
})).reverse();

let server: http.Server;
let url: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const page = Number(query.get('page') ?? 1);
    const limit = Number(query.get('limit') ?? 50);
    const since = query.get('updatedSince') ?? '';
    const matching = alerts.filter((a) => a.updatedAt >= since);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: matching.slice((page - 1) * limit, page * limit), pagination: { page, limit, total: matching.length, totalPages: Math.ceil(matching.length / limit) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('svc alerts watch (CLI.md "Output")', { timeout: E2E_TIMEOUT_MS }, () => {
  const user = cliUser({ SVC_TOKEN: 'stand-in', SVC_BASE_URL: '' });
  afterAll(() => user.cleanup());

  it('prints every change of a burst larger than ten pages, each once', async () => {
    const watch = execa('node', [BIN, 'alerts', 'watch', '-o', 'jsonl', '--since', '2026-01-01T00:00:00Z', '--interval', '1'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: user.home, XDG_CONFIG_HOME: user.configDir, CI: '1', SVC_TOKEN: 'stand-in', SVC_BASE_URL: url },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 30_000,
    });
    let text = '';
    watch.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const lines = () => text.split('\n').filter(Boolean);
    // Two polls at least: the first reads the burst, the second (its 2 s overlap) prints nothing again.
    for (let i = 0; i < 150 && lines().length < BURST; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    watch.kill('SIGINT');
    const result = await watch;
    expect(result.exitCode, result.stderr).toBe(130);
    const ids = lines().map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids.length).toBe(BURST);
    expect(new Set(ids).size).toBe(BURST);
  });

  it('-o csv, yaml or table is a usage error (exit 2): the lines are text, or JSON with -o json or jsonl', async () => {
    for (const format of ['csv', 'yaml', 'table']) {
      const result = await user.run(['alerts', 'watch', '-o', format], { env: { SVC_BASE_URL: url } });
      expect(result.exitCode, format).toBe(2);
      expect(result.stderr).toContain(`-o ${format}`);
    }
  });
});
