#!/usr/bin/env node
// Alerting benchmark (issue 11): a real `svc server start` on loopback, 1,000 enrolled devices, 50 rules, 200 active
// users and 5 webhook channels on loopback HTTPS receivers (the test certificate, trusted through
// NODE_EXTRA_CA_CERTS as the server allows). It prints:
//   steady load          every device sends a sample every 10 s (100 samples/s) for BENCH_ALERTS_SECONDS (20)
//   crossing → channel   during it, BENCH_ALERTS_CROSSINGS (20) devices cross a threshold, one per second; each
//                        raises one alert fanning out to 200 users in-app and 5 channels: p50/p99 from sending the
//                        crossing sample to the first channel request reaching a receiver        (target p99 < 1 s)
//   evaluator burst      ~10,000 samples/s for 3 s (batches of 100 samples), then the time until the event-driven
//                        evaluation has evaluated the newest sample (read from the database, read-only): samples/s
//                        (target ≥ 10,000)
//   server RSS           VmRSS every 200 ms throughout: the peak                                   (target < 200 MB)
// BENCH_ALERTS_PROBE=<dir>: the server also runs with bench/mem-probe.js preloaded and --heapsnapshot-signal=SIGUSR2;
// at each phase's end its process.memoryUsage() and V8 heap spaces go to <dir>/memory.jsonl, and with
// BENCH_ALERTS_SNAPSHOTS=1 a heap snapshot to <dir> (it blocks the server for seconds: not for timed runs).
// Everything is bounded in count and time; nothing leaves 127.0.0.1. A benchmark, not a test: exits 0.
/* global process, console, setTimeout, setInterval, clearInterval, Buffer, URL */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Secret, TOTP } from 'otpauth';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, api, startServer, tmp } from './common.js';
import { cpuMs, printMachine, procStatus, round } from './report.js';

const DEVICES = Number(process.env.BENCH_ALERTS_DEVICES ?? 1000);
const RULES = 50;
const USERS = Number(process.env.BENCH_ALERTS_USERS ?? 200);
const CHANNELS = 5;
const SECONDS = Number(process.env.BENCH_ALERTS_SECONDS ?? 20);
const CROSSINGS = Number(process.env.BENCH_ALERTS_CROSSINGS ?? 20);
const TLS = path.join(ROOT, 'test', 'fixtures', 'tls');
const deadline = Date.now() + 15 * 60_000;
const PROBE = process.env.BENCH_ALERTS_PROBE ? path.resolve(process.env.BENCH_ALERTS_PROBE) : undefined;
const SNAPSHOTS = process.env.BENCH_ALERTS_SNAPSHOTS === '1';

const totp = (secret) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};
/** Runs `work` over `items`, `limit` at a time. */
async function pool(items, limit, work) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      if (Date.now() > deadline) throw new Error('bench deadline passed');
      const i = next++;
      await work(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** A loopback HTTPS receiver: records when the first request for each alert id arrived. */
function receiver(firstSeen) {
  const server = https.createServer(
    { key: fs.readFileSync(path.join(TLS, 'receiver-key.pem')), cert: fs.readFileSync(path.join(TLS, 'receiver-cert.pem')) },
    (req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const at = Date.now();
        try {
          const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).alert?.id;
          if (id && !firstSeen.has(id)) firstSeen.set(id, at);
        } catch {
          // not ours
        }
        res.end('ok');
      });
    },
  );
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function main() {
  printMachine('svc bench alerts');
  const firstSeen = new Map();
  const receivers = [];
  for (let i = 0; i < CHANNELS; i++) receivers.push(await receiver(firstSeen));
  const dataDir = path.join(tmp, 'alerts-data');
  const big = '1000000';
  if (PROBE) fs.mkdirSync(PROBE, { recursive: true });
  const server = await startServer(dataDir, {
    nodeArgs: PROBE
      ? ['--import', path.join(ROOT, 'bench', 'mem-probe.js'), '--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${PROBE}`]
      : [],
    env: {
      ...(PROBE ? { PROBE_OUT: path.join(PROBE, 'memory.jsonl') } : {}),
      SVC_OUTBOUND_ALLOW: '127.0.0.1/32',
      NODE_EXTRA_CA_CERTS: path.join(TLS, 'receiver-cert.pem'),
      SVC_LOGIN_IP_LIMIT: big,
      SVC_LOGIN_EMAIL_LIMIT: big,
      SVC_MFA_LIMIT: big,
      SVC_REGISTER_LIMIT: big,
    },
  });
  let peakRss = 0;
  let phasePeak = 0;
  const rssTimer = setInterval(() => {
    const s = procStatus(server.child.pid);
    if (s && s.rss > peakRss) peakRss = s.rss;
    if (s && s.rss > phasePeak) phasePeak = s.rss;
  }, 200);
  /** RSS by phase: the peak since the last phase ended and the RSS now. */
  const phases = [];
  const phase = async (name) => {
    const s = procStatus(server.child.pid);
    if (PROBE) {
      fs.writeFileSync(path.join(PROBE, 'memory.jsonl.label'), name);
      server.child.kill('SIGWINCH');
      await sleep(300);
      if (SNAPSHOTS) {
        const before = fs.readdirSync(PROBE).length;
        server.child.kill('SIGUSR2');
        for (let i = 0; i < 600 && fs.readdirSync(PROBE).length === before; i++) await sleep(100);
        await sleep(2000);
      }
    }
    phases.push(`${name}: peak ${round(Math.max(phasePeak, s?.rss ?? 0))} MB, now ${round(s?.rss ?? NaN)} MB`);
    phasePeak = 0;
  };
  await sleep(2000);
  await phase('started');
  const url = server.url;
  try {
    let token = (await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).tokens.accessToken;
    const setup = await api(url, 'POST', '/auth/mfa/setup', { token });
    token = (await api(url, 'POST', '/auth/mfa/enable', { token, body: { code: totp(setup.secret) } })).tokens.accessToken;
    const partner = await api(url, 'POST', '/orgs/partners', { token, body: { name: 'Bench Alerts MSP', slug: 'bench-alerts-msp' }, expect: [200, 201] });
    const org = await api(url, 'POST', '/orgs/organizations', { token, body: { partnerId: partner.id, name: 'Bench Alerts', slug: 'bench-alerts' } });
    const setupStart = Date.now();

    // 200 active users of the organization.
    const roles = await api(url, 'GET', '/roles?limit=100', { token });
    const role = roles.data.find((r) => r.scope === 'organization' && r.name === 'Org Viewer') ?? roles.data.find((r) => r.scope === 'organization');
    await pool([...Array(USERS).keys()], 4, async (i) => {
      const invited = await api(url, 'POST', '/users/invite', { token, body: { email: `u${i}@alerts.bench`, name: `User ${i}`, roleId: role.id, orgId: org.id } });
      const inviteToken = new URL(invited.inviteUrl).searchParams.get('token');
      await api(url, 'POST', '/auth/accept-invite', { body: { token: inviteToken, password: 'Bench-User-Passw0rd!' } });
    });

    // 1,000 devices.
    const key = await api(url, 'POST', '/enrollment-keys', { token, body: { orgId: org.id, name: 'bench', maxUsage: DEVICES + 10 } }).catch(() =>
      api(url, 'POST', '/enrollment-keys', { token, body: { orgId: org.id, name: 'bench' } }),
    );
    const agents = [];
    await pool([...Array(DEVICES).keys()], 8, async (i) => {
      const body = { enrollmentKey: key.key, hostname: `dev-${i}`, osType: 'linux', osVersion: 'Debian 12', architecture: 'x86_64', agentVersion: '1.0.0' };
      const a = await api(url, 'POST', '/agents/enroll', { body });
      agents[i] = { id: a.agentId, token: a.authToken };
    });

    // 5 channels and 50 rules (each on its own metric, no duration; rule 0 is the one crossings trip).
    for (let i = 0; i < CHANNELS; i++) {
      const port = receivers[i].address().port;
      await api(url, 'POST', '/alerts/channels', { token, body: { orgId: org.id, name: `hook ${i}`, type: 'webhook', config: { url: `https://127.0.0.1:${port}/hook` } } });
    }
    const template = '00000000-0000-4000-a000-000000000001';
    for (let i = 0; i < RULES; i++) {
      await api(url, 'POST', '/alert-templates/rules', {
        token,
        body: { orgId: org.id, templateId: template, name: `Rule ${i}`, conditions: { metric: `bench.m${i}`, operator: '>', threshold: 90, durationMinutes: 0 } },
      });
    }
    await phase('setup');
    console.log(`setup: ${USERS} users, ${DEVICES} devices, ${CHANNELS} channels, ${RULES} rules in ${round((Date.now() - setupStart) / 1000)} s\n`);

    const post = (agent, samples) => api(url, 'POST', `/agents/${agent.id}/metrics`, { token: agent.token, body: { samples }, expect: [202] });

    // Steady load: each device every 10 s (100 samples/s), with one crossing per second on devices 0..CROSSINGS-1.
    const sent = new Map();
    const steadyEnd = Date.now() + SECONDS * 1000;
    let steadySamples = 0;
    let steadySkipped = 0;
    let steadyFailed = 0;
    const inFlight = new Set();
    let tickNo = 0;
    while (Date.now() < steadyEnd && Date.now() < deadline) {
      const tickStart = Date.now();
      // 10 ticks a second, 1/100 of the devices each tick.
      // At most 64 requests in flight: a server that falls behind gets fewer samples (counted), not a pile-up.
      for (let d = tickNo % 100; d < DEVICES; d += 100) {
        if (inFlight.size >= 64) {
          steadySkipped += 1;
          continue;
        }
        const p = post(agents[d], [{ metric: `bench.m${1 + (d % (RULES - 1))}`, value: 20 + (d % 50) }]).then(
          () => (steadySamples += 1),
          () => (steadyFailed += 1),
        );
        inFlight.add(p);
        p.finally(() => inFlight.delete(p));
      }
      if (tickNo % 10 === 5 && sent.size < CROSSINGS) {
        const d = sent.size;
        const at = Date.now();
        const p = post(agents[d], [{ metric: 'bench.m0', value: 99 }]).catch(() => sent.delete(d));
        sent.set(d, at);
        inFlight.add(p);
        p.finally(() => inFlight.delete(p));
      }
      tickNo += 1;
      await sleep(Math.max(0, 100 - (Date.now() - tickStart)));
    }
    await Promise.allSettled([...inFlight]);
    // Wait (bounded) for the last crossings' first channel requests.
    for (let i = 0; i < 100 && firstSeen.size < sent.size; i++) await sleep(100);
    await phase('steady load and fan-out');
    const alerts = await api(url, 'GET', `/alerts?orgId=${org.id}&limit=100`, { token });
    const alertOf = new Map(alerts.data.map((a) => [a.deviceHostname, a.id]));
    const latencies = [];
    for (const [d, at] of sent) {
      const id = alertOf.get(`dev-${d}`);
      const seen = id ? firstSeen.get(id) : undefined;
      if (seen !== undefined) latencies.push(seen - at);
    }
    console.log(
      `steady load: ${steadySamples} samples accepted in ${SECONDS} s (${round(steadySamples / SECONDS)} samples/s; ${steadySkipped} not sent with 64 in flight, ${steadyFailed} failed)`,
    );
    console.log(
      `crossing → first channel request: ${latencies.length}/${sent.size} alerts reached a receiver; p50 ${round(percentile(latencies, 50), 0)} ms, p99 ${round(percentile(latencies, 99), 0)} ms, max ${round(Math.max(...latencies), 0)} ms (target p99 < 1000 ms)`,
    );

    // Burst: ~10,000 samples/s for 3 s in batches of 100 (50 metrics × 2 timestamps per device), 8 at a time.
    const db = new Database(path.join(dataDir, 'svc.db'), { readonly: true, fileMustExist: true });
    const watermark = () => db.prepare("SELECT evaluated_through AS v FROM alert_evaluator_state WHERE key = 'samples'").get()?.v ?? 0;
    const topId = () => db.prepare('SELECT MAX(id) AS v FROM alert_metric_samples').get()?.v ?? 0;
    const burstStart = Date.now();
    const burstCpu = cpuMs(server.child.pid);
    let burstSamples = 0;
    let batch = 0;
    const burstEnd = burstStart + 3000;
    await pool([...Array(8).keys()], 8, async () => {
      while (Date.now() < burstEnd) {
        const agent = agents[(CROSSINGS + batch++) % DEVICES];
        const now = Date.now();
        const samples = [];
        for (let m = 1; m < RULES; m++) for (const back of [0, 5000]) samples.push({ metric: `bench.m${m}`, value: 10, timestamp: new Date(now - back).toISOString() });
        samples.push({ metric: 'bench.m0', value: 10 }, { metric: 'bench.m0', value: 11, timestamp: new Date(now - 5000).toISOString() });
        await post(agent, samples);
        burstSamples += samples.length;
      }
    });
    const ingested = Date.now();
    await phase('burst ingest');
    const target = topId();
    let caughtUp = NaN;
    for (let i = 0; i < 600; i++) {
      if (watermark() >= target) {
        caughtUp = Date.now();
        break;
      }
      await sleep(50);
    }
    db.close();
    await phase('burst evaluated');
    // CPU time is what a loaded machine does not distort (wall-clock rates are noise there): the server's user +
    // system time from the burst's start until every sample was evaluated, per sample (HTTP ingest included).
    const cpuPerSample = ((cpuMs(server.child.pid) - burstCpu) * 1000) / burstSamples;
    const seconds = (caughtUp - burstStart) / 1000;
    console.log(
      `evaluator burst: ${burstSamples} samples sent in ${round((ingested - burstStart) / 1000, 2)} s (${round(burstSamples / ((ingested - burstStart) / 1000), 0)} samples/s accepted); all evaluated ${round(seconds, 2)} s after the burst began: ${round(burstSamples / seconds, 0)} samples/s end to end (target ≥ 10,000)`,
    );
    console.log(`server CPU per burst sample (ingest + evaluation): ${round(cpuPerSample, 0)} µs`);
    console.log(`server RSS by phase: ${phases.join('; ')}`);
    console.log(`server RSS peak: ${round(peakRss)} MB (target < 200 MB)`);
  } finally {
    clearInterval(rssTimer);
    await server.stop();
    for (const r of receivers) r.close();
  }
}

main().catch((err) => {
  console.error(`bench alerts failed: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
