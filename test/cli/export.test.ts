import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CommandError } from '../../src/cli/base-command.js';
import { checkpointPathFor, readCheckpoint, type ExportParams } from '../../src/cli/export/checkpoint.js';
import { ExportRecordSplitter } from '../../src/cli/export/records.js';
import { UsageError } from '../../src/cli/prompts.js';
import { runElevationExport, type ExportOptions, type ExportPageQuery } from '../../src/cli/export/run.js';
import { callRaw } from '../../src/client/contract-client.js';
import { HttpClient } from '../../src/client/http.js';
import { NetworkError } from '../../src/client/errors.js';
import { pam } from '../../src/client/endpoints.js';
import { BIN } from '../helpers/cli.js';

/**
 * `svc pam export` (CLI.md "The audit export"; 01 §4.9 "Audit export"; 04 "Audit export") against a tiny
 * loopback server that pages rows the way the real one does: a CSV header on every page, cursors, and the
 * X-Next-Cursor, X-Has-More, X-Window-Complete, X-Settled-Through, X-Row-Count and X-Export-Schema-Version
 * headers.
 */

const HEADER = 'id,org_id,details,request_reason\n';
const SETTLED = '2026-01-01T00:00:00.000Z';

/** Row i as CSV: every fifth one has a quoted cell with a line break and an escaped quote (RFC 4180). */
function csvRow(i: number): string {
  const reason = i % 5 === 0 ? `"line one of ${i}\nline ""two"""` : `plain ${i}`;
  return `${i},org,"{""n"":${i}}",${reason}\n`;
}
const jsonRow = (i: number) =>
  `${JSON.stringify({ id: i, org_id: 'org', details: { n: i }, request_reason: i % 5 === 0 ? 'a\nb' : 'plain' })}\n`;

interface MockOptions {
  total: number;
  /** Rows visible so far (the settle watermark); default all. */
  settled?: number;
  /** Page number (counted across the server's life) → what goes wrong on it. */
  faults?: Record<number, 'reset' | 'row-count' | 'schema' | 'no-newline' | 'stall'>;
  /** Rows generated on the fly instead of strings kept (the million-row test). */
  row?: (i: number, format: string) => string;
}

interface Mock {
  url: string;
  pages: number;
  settled: number;
  faults: MockOptions['faults'];
  queries: URLSearchParams[];
  /** Called once a 'stall' page has sent half its rows and waits (for an interrupt) without ending. */
  onStall: () => void;
  close(): Promise<void>;
}

const encode = (index: number) => Buffer.from(String(index)).toString('base64url');
const decode = (cursor: string) => Number(Buffer.from(cursor, 'base64url').toString('utf8'));

async function mockServer(options: MockOptions): Promise<Mock> {
  const state: Mock = {
    url: '',
    pages: 0,
    settled: options.settled ?? options.total,
    faults: options.faults ?? {},
    queries: [],
    onStall: () => undefined,
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/api/v1/audit-logs/export') {
      // svc audit export: one stream that sends a header and a row, then stalls until the client goes away.
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('id,action\n1,auth.login\n', () => state.onStall());
      return;
    }
    if (url.pathname !== '/api/v1/pam/elevation-audit/export') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Not Found' }));
      return;
    }
    state.queries.push(url.searchParams);
    state.pages += 1;
    const fault = state.faults?.[state.pages];
    const format = url.searchParams.get('format') ?? 'csv';
    const limit = Number(url.searchParams.get('limit') ?? '1000');
    const cursor = url.searchParams.get('cursor');
    const start = cursor ? decode(cursor) : 0;
    const end = Math.min(start + limit, state.settled);
    const count = Math.max(0, end - start);
    const hasMore = end < state.settled;
    const complete = !hasMore && state.settled >= options.total;
    const row = options.row ?? ((i: number, f: string) => (f === 'jsonl' ? jsonRow(i) : csvRow(i)));
    res.writeHead(200, {
      'content-type': format === 'jsonl' ? 'application/x-ndjson' : 'text/csv',
      'x-next-cursor': count > 0 ? encode(end) : (cursor ?? ''),
      'x-has-more': String(hasMore),
      'x-window-complete': String(complete),
      'x-settled-through': SETTLED,
      'x-row-count': String(fault === 'row-count' ? count + 1 : count),
      'x-export-schema-version': fault === 'schema' ? '2' : '1',
    });
    const body = Readable.from(
      (function* () {
        if (format === 'csv') yield HEADER;
        // A few rows per chunk, as a real server's stream would send them.
        let batch = '';
        for (let i = start; i < end; i++) {
          const text = row(i, format);
          batch += fault === 'no-newline' && i === end - 1 ? text.slice(0, -1) : text;
          if (fault === 'reset' || (i + 1) % 50 === 0) {
            yield batch;
            batch = '';
          }
        }
        if (batch !== '') yield batch;
      })(),
    );
    if (fault === 'stall') {
      // Half the page, then nothing more until the client gives up (Ctrl-C).
      void (async () => {
        const chunks: string[] = [];
        for await (const chunk of body) chunks.push(chunk as string);
        res.write(chunks.slice(0, Math.ceil(chunks.length / 2)).join(''), () => state.onStall());
      })();
      return;
    }
    if (fault === 'reset') {
      // Half the page reaches the client, then the connection dies (an interrupted export).
      void (async () => {
        const chunks: string[] = [];
        for await (const chunk of body) chunks.push(chunk as string);
        res.write(chunks.slice(0, Math.ceil(chunks.length / 2)).join(''));
        await new Promise((resolve) => setTimeout(resolve, 100));
        req.socket.destroy();
      })();
      return;
    }
    body.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

const PARAMS: ExportParams = {
  from: '2025-01-01T00:00:00Z',
  to: '2026-01-01T00:00:00Z',
  orgId: '11111111-1111-4111-8111-111111111111',
  format: 'csv',
  filters: { siteId: null, deviceId: null, elevationRequestId: null, eventType: null },
};

const clients: HttpClient[] = [];
function fetcher(url: string, signal?: AbortSignal) {
  const client = new HttpClient({
    baseUrl: url,
    retries: 1,
    auth: { headers: async () => ({ authorization: 'Bearer test' }) },
  });
  clients.push(client);
  return (query: ExportPageQuery) => callRaw(client, pam.exportAudit, { query }, signal === undefined ? {} : { signal });
}

/** A Writable that keeps what it receives (for stdout exports). */
function collector() {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, cb) {
      chunks.push(chunk);
      cb();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

function expectedCsv(total: number): string {
  let text = HEADER;
  for (let i = 0; i < total; i++) text += csvRow(i);
  return text;
}

let dir: string;
const mocks: Mock[] = [];
async function mock(options: MockOptions) {
  const m = await mockServer(options);
  mocks.push(m);
  return m;
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-export-test-'));
});
afterEach(async () => {
  for (const m of mocks.splice(0)) await m.close();
  for (const c of clients.splice(0)) await c.close();
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const file = (name: string) => path.join(dir, name);

function run(url: string, options: Partial<ExportOptions> = {}) {
  return runElevationExport({ params: PARAMS, limit: 10, fetchPage: fetcher(url), ...options });
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a failure');
}

describe('ExportRecordSplitter', () => {
  async function split(chunks: string[], format: 'csv' | 'jsonl', dropFirstRecord: boolean) {
    const splitter = new ExportRecordSplitter(format, { dropFirstRecord });
    const out: Buffer[] = [];
    splitter.on('data', (b: Buffer) => out.push(b));
    const done = new Promise((resolve) => splitter.on('end', resolve));
    for (const c of chunks) splitter.write(Buffer.from(c));
    splitter.end();
    await done;
    return {
      text: Buffer.concat(out).toString('utf8'),
      records: splitter.records,
      rows: splitter.rows,
      bytes: splitter.bytesOut,
    };
  }

  it('counts CSV records by line ends outside quotes, however the chunks fall', async () => {
    const text = HEADER + csvRow(0) + csvRow(1) + csvRow(5);
    for (const size of [1, 2, 3, 7, 1000]) {
      const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
      const kept = await split(chunks, 'csv', false);
      expect(kept).toMatchObject({ text, records: 4, rows: 3, bytes: Buffer.byteLength(text) });
      const dropped = await split(chunks, 'csv', true);
      expect(dropped).toMatchObject({ text: text.slice(HEADER.length), records: 4, rows: 3 });
    }
  });

  it('JSON lines: one record a line; a last line without its line end is counted and ended', async () => {
    expect(await split(['{"a":1}\n{"a"', ':2}'], 'jsonl', false)).toMatchObject({
      text: '{"a":1}\n{"a":2}\n',
      records: 2,
      rows: 2,
    });
    expect(await split([], 'csv', true)).toMatchObject({ text: '', records: 0, rows: 0 });
  });
});

describe('pam export: pages (01§4.9 audit export)', () => {
  it('01§4.9 writes the CSV header once across pages, follows the cursor, counts rows with line breaks in cells', async () => {
    const m = await mock({ total: 27 });
    const out = collector();
    const summary = await run(m.url, { stdout: out.stream });
    expect(out.text()).toBe(expectedCsv(27));
    expect(out.text().split(HEADER).length).toBe(2);
    expect(summary).toMatchObject({ rows: 27, pages: 3, complete: true, settledThrough: SETTLED });
    expect(m.queries.map((q) => q.get('cursor'))).toEqual([null, encode(10), encode(20)]);
    expect(m.queries[0]?.get('orgId')).toBe(PARAMS.orgId);
    expect(m.queries[0]?.get('limit')).toBe('10');
  });

  it('JSON lines pass through whole', async () => {
    const m = await mock({ total: 13 });
    const out = collector();
    await run(m.url, { stdout: out.stream, params: { ...PARAMS, format: 'jsonl' } });
    expect(out.text()).toBe(Array.from({ length: 13 }, (_, i) => jsonRow(i)).join(''));
  });

  it('an X-Row-Count that does not match the rows received stops with exit 8, naming the page', async () => {
    const m = await mock({ total: 25, faults: { 2: 'row-count' } });
    const err = await failure(run(m.url, { stdout: collector().stream }));
    expect(err).toBeInstanceOf(CommandError);
    expect(err).toMatchObject({ exitCode: 8, code: 'EXPORT_ROW_COUNT_MISMATCH' });
    expect(err.message).toContain('page 2: expected 11 rows (X-Row-Count), got 10');
  });

  it('an X-Export-Schema-Version it does not know stops with exit 8 before the page is written', async () => {
    const m = await mock({ total: 25, faults: { 2: 'schema' } });
    const target = file('schema.csv');
    const err = await failure(run(m.url, { out: target }));
    expect(err).toMatchObject({ exitCode: 8, code: 'EXPORT_SCHEMA_UNSUPPORTED' });
    expect(err.message).toContain('page 2: export schema version 2');
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(10));
  });

  it('exit 9 when the window is not complete, 0 with allowIncomplete', async () => {
    const m = await mock({ total: 30, settled: 15 });
    const out = collector();
    const err = await failure(run(m.url, { stdout: out.stream }));
    expect(err).toMatchObject({ exitCode: 9, code: 'EXPORT_INCOMPLETE' });
    expect(out.text()).toBe(expectedCsv(15));
    const partial = collector();
    expect(await run(m.url, { stdout: partial.stream, allowIncomplete: true })).toMatchObject({
      rows: 15,
      complete: false,
    });
    expect(partial.text()).toBe(expectedCsv(15));
  });

  it('follow polls from the last cursor until the window completes', async () => {
    const m = await mock({ total: 30, settled: 12 });
    const out = collector();
    const sleeps: number[] = [];
    const summary = await run(m.url, {
      stdout: out.stream,
      follow: true,
      pollSeconds: 7,
      sleep: async (ms) => {
        sleeps.push(ms);
        m.settled = Math.min(30, m.settled + 9);
      },
    });
    expect(out.text()).toBe(expectedCsv(30));
    expect(summary).toMatchObject({ rows: 30, complete: true });
    expect(sleeps).toEqual([7000, 7000]);
  });

  it('a page whose last row lacks its line end still joins the next page cleanly', async () => {
    const m = await mock({ total: 20, faults: { 1: 'no-newline' } });
    const out = collector();
    await run(m.url, { stdout: out.stream });
    expect(out.text()).toBe(expectedCsv(20));
  });
});

describe('pam export --out: checkpoints and --resume (CLI.md "The audit export")', () => {
  it('an uninterrupted export leaves the file and removes its checkpoint', async () => {
    const m = await mock({ total: 42 });
    const target = file('whole.csv');
    expect(await run(m.url, { out: target })).toMatchObject({
      out: target,
      rows: 42,
      pages: 5,
      complete: true,
      resumed: false,
    });
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(42));
    expect(fs.existsSync(checkpointPathFor(target))).toBe(false);
    expect(fs.statSync(target).mode & 0o777).toBe(0o600);
  });

  it('a connection reset on page 3, then --resume: the file is byte-identical to an uninterrupted export', async () => {
    const whole = file('reference.csv');
    await run((await mock({ total: 47 })).url, { out: whole });

    const m = await mock({ total: 47, faults: { 3: 'reset' } });
    const target = file('interrupted.csv');
    const err = await failure(run(m.url, { out: target }));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toContain('page 3: the connection failed while the page was being read');
    const checkpoint = await readCheckpoint(checkpointPathFor(target));
    expect(checkpoint).toMatchObject({
      pages: 2,
      rows: 20,
      cursor: encode(20),
      bytes: Buffer.byteLength(expectedCsv(20)),
    });
    // The half page was cut off when the reset was seen.
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(20));

    // (The first run may have asked for page 4 ahead before page 3 failed.)
    const firstRunQueries = m.queries.length;
    const summary = await run(m.url, { out: target, resume: true, limit: 4 });
    expect(summary).toMatchObject({ rows: 47, complete: true, resumed: true });
    expect(m.queries.at(firstRunQueries)?.get('cursor')).toBe(encode(20));
    expect(fs.readFileSync(target).equals(fs.readFileSync(whole))).toBe(true);
    expect(fs.existsSync(checkpointPathFor(target))).toBe(false);
  });

  it('--resume cuts off a page written after the last checkpoint (a crash between append and checkpoint)', async () => {
    const m = await mock({ total: 35, settled: 20 });
    const target = file('crash.csv');
    expect(await failure(run(m.url, { out: target }))).toMatchObject({ exitCode: 9 });
    // The crash: page 3 appended (partly) but never checkpointed.
    fs.appendFileSync(target, csvRow(20) + csvRow(21).slice(0, 5));
    m.settled = 35;
    await run(m.url, { out: target, resume: true });
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(35));
  });

  it('exit 9 keeps the checkpoint; --resume later continues without a second header', async () => {
    const m = await mock({ total: 30, settled: 18 });
    const target = file('later.csv');
    expect(await failure(run(m.url, { out: target }))).toMatchObject({ exitCode: 9 });
    expect(await readCheckpoint(checkpointPathFor(target))).toMatchObject({ rows: 18, settledThrough: SETTLED });
    m.settled = 30;
    await run(m.url, { out: target, resume: true });
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(30));
  });

  it('a checkpoint of other parameters is refused (exit 2) and the file is left alone', async () => {
    const m = await mock({ total: 30, settled: 10 });
    const target = file('mismatch.csv');
    await failure(run(m.url, { out: target }));
    const before = fs.readFileSync(target);
    const err = await failure(
      run(m.url, {
        out: target,
        resume: true,
        params: { ...PARAMS, filters: { ...PARAMS.filters, eventType: 'approved' } },
      }),
    );
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain('--event-type: the checkpoint has (none), given approved');
    // The same instant written another way is the same parameter.
    m.settled = 30;
    await run(m.url, { out: target, resume: true, params: { ...PARAMS, from: '2025-01-01T01:00:00+01:00' } });
    expect(fs.readFileSync(target).subarray(0, before.length).equals(before)).toBe(true);
  });

  it('without --resume an existing checkpoint is refused (exit 2); --resume without one too', async () => {
    const m = await mock({ total: 30, settled: 10 });
    const target = file('twice.csv');
    await failure(run(m.url, { out: target }));
    expect(await failure(run(m.url, { out: target }))).toBeInstanceOf(UsageError);
    expect(await failure(run(m.url, { out: file('never.csv'), resume: true }))).toBeInstanceOf(UsageError);
  });
});

describe('pam export --out: existing files, missing directories and Ctrl-C (CLI.md "The audit export", exit codes)', () => {
  it('an existing finished FILE is refused (exit 2) and left alone; --force overwrites it', async () => {
    const m = await mock({ total: 12 });
    const target = file('finished.csv');
    fs.writeFileSync(target, 'an earlier export\n');
    const refused = await failure(run(m.url, { out: target }));
    expect(refused).toBeInstanceOf(UsageError);
    expect(refused.message).toContain('--force');
    expect(fs.readFileSync(target, 'utf8')).toBe('an earlier export\n');
    expect(m.pages).toBe(0);
    expect(await run(m.url, { out: target, force: true })).toMatchObject({ rows: 12, complete: true });
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(12));
  });

  it('--force starts an interrupted export over instead of resuming it', async () => {
    const m = await mock({ total: 30, settled: 10 });
    const target = file('restart.csv');
    await failure(run(m.url, { out: target }));
    m.settled = 30;
    expect(await run(m.url, { out: target, force: true })).toMatchObject({ rows: 30, resumed: false });
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(30));
    expect(fs.existsSync(checkpointPathFor(target))).toBe(false);
  });

  it('a directory that does not exist is exit 2 naming it, before any request', async () => {
    const m = await mock({ total: 5 });
    const missing = path.join(dir, 'no-such-dir');
    const err = await failure(run(m.url, { out: path.join(missing, 'x.csv') }));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toContain(missing);
    expect(m.pages).toBe(0);
  });

  it('Ctrl-C in the middle of a page: exit 130, FILE ends at its checkpoint, and the message counts the rows of the checkpoint', async () => {
    const m = await mock({ total: 47, faults: { 3: 'stall' } });
    const target = file('ctrl-c.csv');
    const interrupt = new AbortController();
    m.onStall = () => interrupt.abort(new Error('SIGINT'));
    const err = await failure(run(m.url, { out: target, signal: interrupt.signal, fetchPage: fetcher(m.url, interrupt.signal) }));
    expect(err).toBeInstanceOf(CommandError);
    expect((err as CommandError).exitCode).toBe(130);
    // Pages are read ahead: the stalled third request may come while the first or second page is written.
    const checkpoint = await readCheckpoint(checkpointPathFor(target));
    expect(checkpoint?.pages).toBeLessThan(3);
    expect(err.message).toContain(`after ${checkpoint?.rows ?? -1} rows in ${checkpoint?.pages ?? -1} page`);
    expect(fs.statSync(target).size).toBe(checkpoint?.bytes);
    // Resumed and interrupted again: the message still counts what the checkpoint holds, not this run's rows.
    const again = await mock({ total: 47, faults: { 2: 'stall' } });
    const second = new AbortController();
    again.onStall = () => second.abort(new Error('SIGINT'));
    const resumedErr = await failure(
      run(again.url, { out: target, resume: true, signal: second.signal, fetchPage: fetcher(again.url, second.signal) }),
    );
    const after = await readCheckpoint(checkpointPathFor(target));
    expect(after?.rows).toBeGreaterThanOrEqual(checkpoint?.rows ?? 0);
    expect(resumedErr.message).toContain(`after ${after?.rows ?? -1} rows in ${after?.pages ?? -1} page`);
    expect(fs.statSync(target).size).toBe(after?.bytes);
    const m2 = await mock({ total: 47 });
    expect(await run(m2.url, { out: target, resume: true })).toMatchObject({ rows: 47, complete: true });
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(47));
  });
});

describe('pam export: memory', () => {
  it('stays flat over 1,000,000 rows (pages stream through, nothing is collected)', { timeout: 120_000 }, async () => {
    const total = 1_000_000;
    const m = await mock({ total, row: (i) => `${i},org,{},r\n` });
    let bytes = 0;
    let rows = 0;
    const sink = new Writable({
      write(chunk: Buffer, _e, cb) {
        bytes += chunk.length;
        cb();
      },
    });
    global.gc?.();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 20);
    try {
      const summary = await run(m.url, { stdout: sink, limit: 1000, onProgress: (p) => void (rows = p.rows) });
      expect(summary).toMatchObject({ rows: total, pages: 1000, complete: true });
    } finally {
      clearInterval(timer);
    }
    expect(rows).toBe(total);
    expect(bytes).toBeGreaterThan(15_000_000);
    // The export is ~17 MB; a buffered one would hold it (as UTF-16 strings, twice that).
    expect(peak - baseline).toBeLessThan(40 * 1024 * 1024);
  });
});

describe('svc pam export (the command: flags and exit codes)', () => {
  const home = () => fs.mkdtempSync(path.join(os.tmpdir(), 'svc-export-home-'));
  /** `svc ARGS` against the mock; `onStall`, when given, is what the mock does when a page stalls (Ctrl-C). */
  async function command(url: string, args: string[], options: { ci?: boolean; mock?: Mock } = {}) {
    const h = home();
    try {
      const child = execa('node', [BIN, ...args], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: h,
          XDG_CONFIG_HOME: path.join(h, '.config'),
          XDG_DATA_HOME: path.join(h, '.data'),
          ...(options.ci === false ? {} : { CI: '1' }),
          SVC_TOKEN: 'test-token',
          SVC_BASE_URL: url,
        },
        extendEnv: false,
        reject: false,
        timeout: 20_000,
        stdin: 'ignore',
      });
      if (options.mock) options.mock.onStall = () => void child.kill('SIGINT');
      const result = await child;
      return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
    } finally {
      fs.rmSync(h, { recursive: true, force: true });
    }
  }
  const svc = (url: string, args: string[], options: { ci?: boolean; mock?: Mock } = {}) =>
    command(url, ['pam', 'export', '--from', PARAMS.from, '--to', PARAMS.to, '--org-id', PARAMS.orgId ?? '', ...args], options);

  it('Ctrl-C (SIGINT) mid-export: exit 130; FILE ends at its checkpoint; message and checkpoint count the same rows', async () => {
    const m = await mock({ total: 95, faults: { 5: 'stall' } });
    const target = file('sigint.csv');
    const interrupted = await svc(m.url, ['--limit', '10', '--out', target], { mock: m });
    expect(interrupted.exitCode, interrupted.stderr).toBe(130);
    const checkpoint = await readCheckpoint(checkpointPathFor(target));
    expect(checkpoint).toBeDefined();
    const said = /Interrupted after ([\d,]+) rows? in (\d+) pages?/.exec(interrupted.stderr);
    expect(said?.slice(1)).toEqual([String(checkpoint?.rows), String(checkpoint?.pages)]);
    expect(interrupted.stderr).toContain('--resume');
    expect(fs.statSync(target).size).toBe(checkpoint?.bytes);
    const resumed = await svc((await mock({ total: 95 })).url, ['--out', target, '--resume', '--output', 'json']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(95));
  });

  it('issue 9 item 15: -o and -q without --out are refused (exit 2), since the rows go out as --format says', async () => {
    const m = await mock({ total: 3 });
    for (const extra of [['-o', 'yaml'], ['-q']]) {
      const refused = await svc(m.url, extra);
      expect(refused.exitCode, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('--format');
      expect(refused.stdout).toBe('');
    }
  });

  it('--out over an existing file is exit 2 unless --force; a missing directory is exit 2 naming it', async () => {
    const m = await mock({ total: 12 });
    const target = file('cli-existing.csv');
    fs.writeFileSync(target, 'keep me\n');
    const refused = await svc(m.url, ['--out', target]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--force');
    expect(fs.readFileSync(target, 'utf8')).toBe('keep me\n');
    expect((await svc(m.url, ['--out', target, '--force'])).exitCode).toBe(0);
    expect(fs.readFileSync(target, 'utf8')).toBe(expectedCsv(12));
    const missing = path.join(dir, 'absent');
    const noDir = await svc(m.url, ['--out', path.join(missing, 'x.csv')]);
    expect(noDir.exitCode).toBe(2);
    expect(noDir.stderr).toContain(missing);
  });

  it('without a terminal stderr carries no progress, CI set or not: no carriage returns, no escapes', async () => {
    for (const ci of [true, false]) {
      const m = await mock({ total: 40 });
      const target = file(`quiet-${String(ci)}.csv`);
      const result = await svc(m.url, ['--limit', '10', '--out', target], { ci });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
    }
  });

  it('svc audit export --out: an existing file is exit 2 unless --force, a missing directory exit 2; Ctrl-C leaves no file', async () => {
    const m = await mock({ total: 1 });
    const target = file('audit.csv');
    fs.writeFileSync(target, 'an earlier export\n');
    const refused = await command(m.url, ['audit', 'export', '--out', target]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--force');
    expect(fs.readFileSync(target, 'utf8')).toBe('an earlier export\n');
    const missing = path.join(dir, 'absent-audit');
    const noDir = await command(m.url, ['audit', 'export', '--out', path.join(missing, 'a.csv')]);
    expect(noDir.exitCode).toBe(2);
    expect(noDir.stderr).toContain(missing);
    // The mock's audit export sends a row, then stalls: Ctrl-C then.
    const interrupted = await command(m.url, ['audit', 'export', '--out', target, '--force'], { mock: m });
    expect(interrupted.exitCode, interrupted.stderr).toBe(130);
    expect(fs.readFileSync(target, 'utf8')).toBe('an earlier export\n');
    expect(fs.existsSync(`${target}.partial`)).toBe(false);
    const fresh = file('audit-fresh.csv');
    expect((await command(m.url, ['audit', 'export', '--out', fresh], { mock: m })).exitCode).toBe(130);
    expect(fs.existsSync(fresh) || fs.existsSync(`${fresh}.partial`)).toBe(false);
  });

  it('streams to stdout; exit 9 when incomplete, 0 with --allow-incomplete; --follow and --allow-incomplete exclude each other', async () => {
    const m = await mock({ total: 30, settled: 25 });
    const incomplete = await svc(m.url, ['--limit', '10']);
    expect(incomplete.exitCode).toBe(9);
    expect(incomplete.stdout + '\n').toBe(expectedCsv(25));
    expect(incomplete.stderr).toContain('not complete');
    const allowed = await svc(m.url, ['--limit', '10', '--allow-incomplete']);
    expect(allowed.exitCode).toBe(0);
    expect(allowed.stdout + '\n').toBe(expectedCsv(25));
    expect((await svc(m.url, ['--allow-incomplete', '--follow'])).exitCode).toBe(2);
    expect((await svc(m.url, ['--resume'])).exitCode).toBe(2);
    const badWindow = await svc(m.url, ['--to', '2024-01-01T00:00:00Z']);
    expect(badWindow.exitCode).toBe(2);
    expect(badWindow.stderr).toContain('--to');
  });

  it('--follow polls every --poll-seconds until the window completes, then exits 0', async () => {
    const m = await mock({ total: 30, settled: 12 });
    // The rest settles once the first pass (two pages, the window not complete) was served, however long the
    // CLI took to start.
    const release = setInterval(() => {
      if (m.pages >= 2) m.settled = 30;
    }, 5);
    const followed = await svc(m.url, ['--limit', '10', '--follow', '--poll-seconds', '1']);
    clearInterval(release);
    expect(followed.exitCode, followed.stderr).toBe(0);
    expect(`${followed.stdout}\n`).toBe(expectedCsv(30));
    expect(m.pages).toBeGreaterThanOrEqual(4);
  });

  it('--out, a reset, then --resume: byte-identical; a parameter mismatch exits 2; a bad page exits 8', async () => {
    const reference = file('cli-reference.csv');
    await run((await mock({ total: 33 })).url, { out: reference });
    const m = await mock({ total: 33, faults: { 2: 'reset' } });
    const target = file('cli.csv');
    const first = await svc(m.url, ['--limit', '10', '--out', target]);
    expect(first.exitCode).toBe(8);
    expect(first.stderr).toContain('page 2: the connection failed while the page was being read');
    const mismatch = await svc(m.url, ['--limit', '10', '--out', target, '--resume', '--format', 'jsonl']);
    expect(mismatch.exitCode).toBe(2);
    expect(mismatch.stderr).toContain('--format');
    const resumed = await svc(m.url, ['--limit', '7', '--out', target, '--resume', '--output', 'json']);
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ out: target, rows: 33, complete: true, resumed: true });
    expect(fs.readFileSync(target).equals(fs.readFileSync(reference))).toBe(true);

    const bad = await mock({ total: 30, faults: { 1: 'row-count' } });
    const mismatched = await svc(bad.url, []);
    expect(mismatched.exitCode).toBe(8);
    expect(mismatched.stderr).toContain('page 1: expected 31 rows (X-Row-Count), got 30');
  });
});
