#!/usr/bin/env node
// `npm run bench` (after bench/run.js): outgoing webhook deliveries at volume, from one run on this machine. A
// benchmark, not a test: it prints what it measured and exits 0 whatever the figures are.
//
//   Setup: the built server (dist/) runs in this process (buildApp on a temp data dir, its job worker started), so
//   that events enter exactly as the server's modules publish them: `publishEvent` into the outbox, inside a
//   transaction, then relayed, fanned out to deliveries and sent by the delivery pump. The admin turns on MFA
//   (otpauth) and creates, through the API (Fastify inject), one organization and WEBHOOKS (10) webhooks, each on
//   its own loopback HTTPS receiver and subscribed to its own event type. The receivers run in a child process
//   (the test certificate, trusted here through NODE_EXTRA_CA_CERTS; SVC_OUTBOUND_ALLOW=127.0.0.1/32), recompute
//   every signature (HMAC-SHA256 over `<timestamp>.<body>`) and report each arrival's time.
//   1. Throughput: BENCH_WEBHOOK_EVENTS (20,000) events, round-robin over the webhooks (one delivery each), all
//      published at once (chunks of 500 per transaction). Sustained signed deliveries/s: the arrivals between the
//      10th and the 90th percentile over their time span (and, reported, all of them from the first publish).
//   2. Latency: BENCH_WEBHOOK_PACED (5,000) events at BENCH_WEBHOOK_RATE (500) per second, in 10 ms steps: from
//      publishEvent to the receiver's arrival of the first attempt, p50 and p99.
//   3. Backlog: the receivers hold every request (no answer), BENCH_WEBHOOK_PENDING (50,000) events are published;
//      the server's RSS (this process's VmRSS) is sampled every 250 ms with the count of pending deliveries while
//      they pile up and for BENCH_WEBHOOK_HOLD_SECONDS (60) after (printed every 5 s); then the receivers answer and
//      the backlog drains. Held attempts time out after 30 s (02 §8) and are retried: the backlog stays pending.
//   BENCH_WEBHOOK_ALERT_PAYLOADS=1: the alert.* events carry real alert payloads (see alertOf below).
//   The process runs with the server's memory setting (src/server/memory.ts, applied as startServer applies it).
//   Stable under load (quoted when the machine is busy): the server's CPU µs per delivery (process.cpuUsage over
//   phase 1, the publishing itself measured apart and taken off) and SQLite transactions per event (every
//   transaction this process opened during phase 1, nested ones included, over its events).
// Targets (issue 12): ≥ 2,000 signed deliveries/s sustained; p99 event → first attempt < 250 ms; RSS < 200 MB and
// flat with 50,000 deliveries pending. Every phase is bounded by BENCH_WEBHOOK_MAX_SECONDS (120) and by its count.
/* global process, console, setTimeout, setInterval, clearInterval, setImmediate, Buffer, URL */
import { fork, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import v8 from 'node:v8';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, distServer, tmp } from './common.js';
import { printMachine, printTable, procStatus, round } from './report.js';

const WEBHOOKS = Number(process.env.BENCH_WEBHOOK_COUNT ?? 10);
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const PACED = Number(process.env.BENCH_WEBHOOK_PACED ?? 5_000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 500);
const PENDING = Number(process.env.BENCH_WEBHOOK_PENDING ?? 50_000);
const HOLD_SECONDS = Number(process.env.BENCH_WEBHOOK_HOLD_SECONDS ?? 60);
const MAX_SECONDS = Number(process.env.BENCH_WEBHOOK_MAX_SECONDS ?? 120);
const CERT = path.join(ROOT, 'test', 'fixtures', 'tls', 'receiver-cert.pem');
const KEY = path.join(ROOT, 'test', 'fixtures', 'tls', 'receiver-key.pem');
const TYPES = ['device.updated', 'device.online', 'device.offline', 'alert.triggered', 'alert.resolved', 'script.completed', 'script.failed', 'policy.violation', 'patch.installed', 'user.login'];
const secretOf = (i) => `bench-webhook-secret-${i}`;
// BENCH_WEBHOOK_ALERT_PAYLOADS=1: the alert.* events carry an alert's payload (ALERT-EVENTS.md: alertId, title,
// severity…; alert.resolved closes the alert its alert.triggered of the same round opened), so the other subscribers
// of those events (notifications, mobile push, PSA) do their real work; by default they carry only the bench's
// fields, which those subscribers do not take for an alert.
const ALERT_PAYLOADS = process.env.BENCH_WEBHOOK_ALERT_PAYLOADS === '1';
const alertOf = (type, phase, seq) => ({
  alertId: `bench-${phase}-${Math.floor(seq / TYPES.length)}`,
  severity: 'high',
  status: type === 'alert.resolved' ? 'resolved' : 'active',
  title: `Bench alert ${Math.floor(seq / TYPES.length)}`,
  message: 'cpu 97 > 90',
  context: {},
  triggeredAt: new Date().toISOString(),
  notificationChannelIds: null,
  escalationPolicyId: null,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Where this process's memory is, in MB: RSS split as the kernel counts it (anonymous: heaps, malloc, thread
 * stacks; file: mapped code and libraries), V8's young and old generations (in use/held), memory outside the V8 heap
 * (external, of which ArrayBuffers), and the TLS sockets open (outbound attempts in flight or kept alive). */
function memBreakdown() {
  const mb = (n) => round(n / 1048576, 1);
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s]));
  const of = (name) => (spaces[name] ? `${mb(spaces[name].space_used_size)}/${mb(spaces[name].space_size)}` : '-');
  let anon = NaN;
  let file = NaN;
  try {
    const rollup = fs.readFileSync('/proc/self/status', 'utf8');
    anon = Number(/RssAnon:\s+(\d+) kB/.exec(rollup)?.[1] ?? NaN) / 1024;
    file = Number(/RssFile:\s+(\d+) kB/.exec(rollup)?.[1] ?? NaN) / 1024;
  } catch {
    // no /proc
  }
  const sockets = process.getActiveResourcesInfo().filter((r) => r === 'TLSSocket' || r === 'TCPSocketWrap' || r === 'TCPWRAP').length;
  return `rss ${mb(m.rss)} (anon ${round(anon, 1)}, file ${round(file, 1)}); heap ${mb(m.heapUsed)}/${mb(m.heapTotal)} (new ${of('new_space')}, old ${of('old_space')}, code ${of('code_space')}, large ${of('large_object_space')}); external ${mb(m.external)} (arrayBuffers ${mb(m.arrayBuffers)}); sockets ${sockets}`;
}

// ---- the receivers (a child process) ----

async function runReceivers(count) {
  const key = fs.readFileSync(KEY);
  const cert = fs.readFileSync(CERT);
  let holding = false;
  const held = [];
  let batch = [];
  const ports = [];
  for (let i = 0; i < count; i++) {
    const secret = secretOf(i);
    const server = https.createServer({ key, cert, keepAliveTimeout: 30_000 }, (req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const arrived = Date.now();
        const body = Buffer.concat(chunks).toString('utf8');
        const ts = String(req.headers['x-svc-signature-timestamp'] ?? '');
        const expected = `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
        const valid = String(req.headers['x-svc-signature'] ?? '').split(',').includes(expected) ? 1 : 0;
        let data = {};
        try {
          data = JSON.parse(body).data ?? {};
        } catch {
          // counted as unsigned/invalid below
        }
        batch.push([data.phase ?? '', data.seq ?? -1, data.sentAt ?? 0, arrived, valid]);
        if (holding) held.push(res);
        else res.end('ok');
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    ports.push(server.address().port);
  }
  setInterval(() => {
    if (batch.length) process.send?.({ type: 'arrivals', rows: batch.splice(0) });
  }, 50);
  process.on('message', (msg) => {
    if (msg.cmd === 'hold') holding = true;
    if (msg.cmd === 'release') {
      holding = false;
      for (const res of held.splice(0)) res.end('ok');
    }
    if (msg.cmd === 'exit') process.exit(0);
  });
  process.send?.({ type: 'ready', ports });
}

// ---- the bench ----

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  printMachine('svc bench: webhooks');
  const { loadConfig } = await distServer('config.js');
  const { buildApp } = await distServer('app.js');
  const { publishEvent } = await distServer('jobs/queue.js');
  // The server's memory setting, as startServer (`svc server start`) applies it before it builds the app.
  const { applyServerMemorySettings } = await distServer('memory.js');
  applyServerMemorySettings();
  const { Secret, TOTP } = await import('otpauth');

  const dataDir = path.join(tmp, 'webhooks-data');
  fs.mkdirSync(dataDir, { recursive: true });
  const config = loadConfig({
    SVC_DATA_DIR: dataDir,
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_LOG_LEVEL: 'warn',
    SVC_OUTBOUND_ALLOW: '127.0.0.1/32',
  });
  const built = await buildApp(config, { logger: false, announce: () => {} });
  const { app, db, worker } = built;

  const receivers = fork(new URL(import.meta.url).pathname, ['receivers', String(WEBHOOKS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const arrivals = { throughput: [], paced: [], backlog: [] };
  let invalid = 0;
  const ready = new Promise((resolve) =>
    receivers.on('message', (msg) => {
      if (msg.type === 'ready') resolve(msg.ports);
      if (msg.type === 'arrivals')
        for (const row of msg.rows) {
          if (!row[4]) invalid++;
          arrivals[row[0]]?.push(row);
        }
    }),
  );
  const ports = await ready;

  const call = async (method, url, { token, body } = {}) => {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(body ? { payload: body } : {}),
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: HTTP ${res.statusCode} ${res.body}`);
    return JSON.parse(res.body);
  };
  const rows = [];
  const raw = {};
  try {
    let token = (await call('POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).tokens.accessToken;
    const setup = await call('POST', '/auth/mfa/setup', { token });
    const code = new TOTP({ secret: Secret.fromBase32(setup.secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    token = (await call('POST', '/auth/mfa/enable', { token, body: { code } })).tokens.accessToken;
    const partner = await call('POST', '/orgs/partners', { token, body: { name: 'Bench MSP', slug: 'bench-msp' } });
    const org = await call('POST', '/orgs/organizations', { token, body: { name: 'Bench Org', slug: 'bench-org', partnerId: partner.id } });
    for (let i = 0; i < WEBHOOKS; i++) {
      await call('POST', '/webhooks', {
        token,
        body: { orgId: org.id, name: `bench-${i}`, url: `https://127.0.0.1:${ports[i]}/hook`, secret: secretOf(i), events: [TYPES[i % TYPES.length]] },
      });
    }
    // Every transaction this process opens (better-sqlite3's transaction functions, any mode) is counted.
    let transactions = 0;
    const openTransaction = db.$client.transaction.bind(db.$client);
    db.$client.transaction = (fn) =>
      openTransaction((...args) => {
        transactions++;
        return fn(...args);
      });
    worker.start();
    const rssMb = () => procStatus(process.pid)?.rss ?? NaN;

    let publishCpuUs = 0;
    const publish = (phase, from, count) => {
      const cpu = process.cpuUsage();
      const before = transactions;
      db.$client.transaction(() => {
        for (let seq = from; seq < from + count; seq++) {
          const type = TYPES[seq % WEBHOOKS % TYPES.length];
          publishEvent(db, type, { orgId: org.id, phase, seq, sentAt: Date.now(), ...(ALERT_PAYLOADS && type.startsWith('alert.') ? alertOf(type, phase, seq) : {}) }, org.id);
        }
      })();
      transactions = before;
      const used = process.cpuUsage(cpu);
      publishCpuUs += used.user + used.system;
    };
    const waitFor = async (list, count, label) => {
      const deadline = Date.now() + MAX_SECONDS * 1000;
      while (list.length < count && Date.now() < deadline) await sleep(50);
      if (list.length < count) raw[`${label}: stopped by the ${MAX_SECONDS} s limit`] = [`${list.length} of ${count} arrived`];
    };

    raw['server RSS MB before any event (app built, worker started)'] = [rssMb()];
    raw['server V8 heap used/total MB before any event'] = [process.memoryUsage().heapUsed / 1048576, process.memoryUsage().heapTotal / 1048576];
    raw['memory before any event'] = [memBreakdown()];

    // 1. Throughput.
    const cpuStart = process.cpuUsage();
    const transactionsStart = transactions;
    const started = Date.now();
    for (let from = 0; from < EVENTS; from += 500) {
      publish('throughput', from, Math.min(500, EVENTS - from));
      await new Promise((r) => setImmediate(r));
    }
    const publishedMs = Date.now() - started;
    await waitFor(arrivals.throughput, EVENTS, 'throughput');
    const cpu = process.cpuUsage(cpuStart);
    const serverCpuUs = cpu.user + cpu.system - publishCpuUs;
    const deliveredCount = db.$client.prepare("SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered'").pluck().get();
    rows.push({ m: 'server CPU per delivery (phase 1, publishing excluded)', v: round(serverCpuUs / Math.max(1, deliveredCount), 1), unit: 'µs', ratio: null, target: '(reported)', pass: null });
    rows.push({ m: 'SQLite transactions per event (phase 1)', v: round((transactions - transactionsStart) / EVENTS, 3), unit: '', ratio: null, target: '(reported)', pass: null });
    raw['throughput: server CPU ms, publishing CPU ms, transactions, delivered'] = [serverCpuUs / 1000, publishCpuUs / 1000, transactions - transactionsStart, deliveredCount];
    // What else the events cost: the jobs of the other subscribers (alerts, notifications, PSA), each a claim, a run
    // and a finish of its own.
    raw['throughput: jobs by type after phase 1'] = db.$client
      .prepare('SELECT type, count(*) AS n FROM jobs GROUP BY type ORDER BY n DESC')
      .all()
      .map((r) => `${r.type} ${r.n}`);
    const times = arrivals.throughput.map((r) => r[3]).sort((a, b) => a - b);
    const lo = percentile(times, 10);
    const hi = percentile(times, 90);
    const sustained = ((0.8 * times.length) / Math.max(1, hi - lo)) * 1000;
    const overall = (times.length / Math.max(1, (times.at(-1) ?? started) - started)) * 1000;
    rows.push({ m: `signed deliveries/s sustained (${EVENTS} events, 10th-90th pct)`, v: `${Math.round(sustained)}/s`, ratio: null, target: '≥ 2,000/s', pass: sustained >= 2000 });
    rows.push({ m: 'deliveries/s from first publish to last arrival', v: `${Math.round(overall)}/s`, ratio: null, target: '(reported)', pass: null });
    raw['throughput: publish time of all events (ms)'] = [publishedMs];
    raw['throughput: arrivals, invalid signatures so far'] = [times.length, invalid];
    raw['memory after phase 1'] = [memBreakdown()];

    // 2. Latency at a steady rate.
    const perStep = Math.max(1, Math.round(RATE / 100));
    const pacedStart = Date.now();
    for (let sent = 0, step = 0; sent < PACED && Date.now() - pacedStart < MAX_SECONDS * 1000; step++) {
      const n = Math.min(perStep, PACED - sent);
      publish('paced', sent, n);
      sent += n;
      const due = pacedStart + (step + 1) * 10;
      await sleep(Math.max(0, due - Date.now()));
    }
    await waitFor(arrivals.paced, PACED, 'latency');
    const latencies = arrivals.paced.map((r) => r[3] - r[2]).sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    rows.push({ m: `event → first attempt p50 (${RATE} events/s)`, v: p50, unit: 'ms', ratio: null, target: '', pass: null });
    rows.push({ m: `event → first attempt p99 (${RATE} events/s)`, v: p99, unit: 'ms', ratio: null, target: '< 250 ms', pass: p99 < 250 });
    raw['latency: max (ms), arrivals'] = [latencies.at(-1), latencies.length];
    raw['memory after phase 2'] = [memBreakdown()];

    // 3. Backlog held by the receivers.
    receivers.send({ cmd: 'hold' });
    await sleep(200);
    const pendingCount = db.$client.prepare("SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'retrying')").pluck();
    const samples = [];
    const sample = () => {
      const mem = process.memoryUsage();
      samples.push({ t: Date.now(), rss: rssMb(), pending: pendingCount.get(), heap: mem.heapUsed / 1048576, heapTotal: mem.heapTotal / 1048576, external: mem.external / 1048576 });
    };
    const sampler = setInterval(sample, 250);
    sample();
    const backlogStart = Date.now();
    for (let from = 0; from < PENDING && Date.now() - backlogStart < MAX_SECONDS * 1000; from += 500) {
      publish('backlog', from, Math.min(500, PENDING - from));
      await new Promise((r) => setImmediate(r));
    }
    const fanoutDeadline = Date.now() + MAX_SECONDS * 1000;
    while ((samples.at(-1)?.pending ?? 0) < PENDING * 0.99 && Date.now() < fanoutDeadline) await sleep(250);
    const fullAt = Date.now();
    raw['memory at full backlog'] = [memBreakdown()];
    const holdCpu = process.cpuUsage();
    await sleep(HOLD_SECONDS * 1000);
    const heldCpu = process.cpuUsage(holdCpu);
    raw['backlog: server CPU ms over the hold (nothing answered, attempts time out after 30 s)'] = [(heldCpu.user + heldCpu.system) / 1000];
    clearInterval(sampler);
    sample();
    raw['memory at the end of the hold'] = [memBreakdown()];
    const atFull = samples.filter((s) => s.t >= fullAt);
    const peak = Math.max(...samples.map((s) => s.rss));
    const first = atFull[0]?.rss ?? NaN;
    const last = atFull.at(-1)?.rss ?? NaN;
    rows.push({ m: `RSS with ${samples.at(-1)?.pending} deliveries pending (peak)`, v: peak, unit: 'MB', ratio: null, target: '< 200 MB', pass: peak < 200 });
    // Flat means the held backlog does not make the server grow: every sample of the hold within 10% above the
    // first. V8 handing pages back during the hold (RSS falling) is not growth; the lowest sample is printed too.
    const holdMax = Math.max(...atFull.map((s) => s.rss));
    const holdMin = Math.min(...atFull.map((s) => s.rss));
    rows.push({
      m: `RSS over ${HOLD_SECONDS} s of full backlog (first → last; max, min)`,
      v: `${round(first)} → ${round(last)} MB; ${round(holdMax)}, ${round(holdMin)}`,
      ratio: null,
      target: 'flat: max ≤ first + 10%',
      pass: holdMax <= 1.1 * first,
    });
    const pick = (fraction) => samples.find((s) => s.pending >= PENDING * fraction);
    raw['backlog: RSS MB at 0 / 25% / 50% / 100% pending'] = [samples[0]?.rss, pick(0.25)?.rss, pick(0.5)?.rss, pick(0.99)?.rss];
    // What of the RSS is V8's: the heap in use and the heap V8 holds (used or not), and memory outside it (Buffers).
    const memOf = (s) => (s ? `${round(s.heap)}/${round(s.heapTotal)}/${round(s.external)}` : '');
    raw['backlog: V8 heap used/total/external MB at 0 / 50% / 100% pending / end of hold'] = [memOf(samples[0]), memOf(pick(0.5)), memOf(pick(0.99)), memOf(samples.at(-1))];
    raw['backlog: RSS MB every 5 s of the hold (pending)'] = atFull.filter((_, i) => i % 20 === 0).map((s) => `${round(s.rss)} (${s.pending})`);
    raw['backlog: seconds to fan out every event'] = [(fullAt - backlogStart) / 1000];
    receivers.send({ cmd: 'release' });
    const drainStart = Date.now();
    const drainDeadline = drainStart + MAX_SECONDS * 1000;
    while (pendingCount.get() > 0 && Date.now() < drainDeadline) await sleep(250);
    const left = pendingCount.get();
    raw['backlog: drain after release (s), left pending'] = [(Date.now() - drainStart) / 1000, left];
    raw['invalid signatures (all phases)'] = [invalid];
    const statuses = db.$client.prepare('SELECT status, count(*) AS n, max(response_body) AS why FROM webhook_deliveries GROUP BY status').all();
    raw['deliveries by status (a reason when not delivered)'] = statuses.map((r) => `${r.status} ${r.n}${r.status === 'delivered' ? '' : ` (${String(r.why ?? '').slice(0, 120)})`}`);
  } finally {
    receivers.send({ cmd: 'exit' });
    await worker.stop();
    await app.close();
  }
  printTable(rows);
  console.log('\nwebhooks raw:');
  for (const [name, values] of Object.entries(raw)) console.log(`  ${name}: ${values.map((v) => (typeof v === 'number' ? round(v, 1) : v)).join(', ')}`);
}

if (process.argv[2] === 'receivers') {
  runReceivers(Number(process.argv[3] ?? WEBHOOKS)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else if (process.env.NODE_EXTRA_CA_CERTS !== CERT) {
  // The server trusts the receivers' test certificate the one way it allows: NODE_EXTRA_CA_CERTS, read at start.
  const run = spawnSync(process.execPath, [new URL(import.meta.url).pathname, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: CERT },
  });
  process.exit(run.status ?? 1);
} else {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(`bench webhooks failed: ${err instanceof Error ? err.stack : String(err)}`);
      process.exit(1);
    },
  );
}
