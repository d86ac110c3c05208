#!/usr/bin/env node
// `node bench/write-floor.js` (after `npm run build`; not part of `npm run bench`): the ratio to /health that a
// create-site write could reach at best on this machine. A bare Fastify (no hooks, no API key, no validation, no
// logger) answers GET /health and POST /sites; POST /sites runs the server's own create-site transaction
// (TenancyService.createSite: the organization lookup, the site, its audit entry) on a fresh migrated database,
// with the server's group commit (db/group-commit.ts) and held replies (http/reply-release.ts). Two layouts:
//
//   main    the transaction on the event loop's thread, as the server runs it;
//   worker  the transaction on a worker thread of its own (one message per turn each way), the layout issue 10's
//           write target was thought to need.
//
// Per layout and round, as bench/routes.js does: GET /health for BENCH_LOAD_SECONDS, then POST /sites as long
// (autocannon in a separate process, BENCH_LOAD_CONNECTIONS connections); it prints req/s, the ratio to the
// /health run just before, and the server's CPU per request. Compare with bench/routes.js's create-site row: what
// the real server adds on top is the API key, validation, hooks and logging.
// Environment: BENCH_LOAD_SECONDS (5), BENCH_LOAD_CONNECTIONS (50), BENCH_FLOOR_ROUNDS (3),
// BENCH_FLOOR_LAYOUTS (main,worker).
/* global process, console, setImmediate */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { cpuMs, median, printColumns, printMachine, round } from './report.js';

const SELF = fileURLToPath(import.meta.url);
// A module of dist/server. bench/common.js is imported by the driver only: importing it makes (and at exit
// removes) a temp dir, which the server process and its worker thread do not need.
const distServer = (module) =>
  import(pathToFileURL(path.join(path.dirname(SELF), '..', 'dist', 'server', module)).href);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 50);
const ROUNDS = Number(process.env.BENCH_FLOOR_ROUNDS ?? 3);
const LAYOUTS = (process.env.BENCH_FLOOR_LAYOUTS ?? 'main,worker').split(',').filter(Boolean);

/** The create-site transaction on a fresh database, as an organization API key of the benchmark runs it. */
async function siteWriter(file) {
  const { openDatabase, applyMigrations } = await distServer('db/connection.js');
  const { groupCommits } = await distServer('db/group-commit.js');
  const { insertRow } = await distServer('db/prepared.js');
  const schema = await distServer('db/schema/index.js');
  const { TenancyService } = await distServer('modules/tenancy/service.js');
  const db = openDatabase(file);
  applyMigrations(db);
  const partner = insertRow(db, schema.partners, { name: 'Floor partner', slug: 'floor-partner' });
  const org = insertRow(db, schema.organizations, { partnerId: partner.id, name: 'Floor org', slug: 'floor-org' });
  const tenancy = new TenancyService(db);
  const commits = groupCommits(db.$client, (err) => console.error('group commit failed', err));
  const ctx = {
    caller: {
      kind: 'apiKey',
      userId: null,
      email: null,
      name: null,
      scope: 'organization',
      partnerId: partner.id,
      orgId: org.id,
      orgAccess: null,
      orgIds: null,
      siteIds: null,
      deviceGroupIds: null,
      roleId: null,
      permissions: ['*'],
      mfa: false,
      sessionId: null,
      apiKeyId: crypto.randomUUID(),
      agentId: null,
      deviceId: null,
      partnerStatus: 'active',
    },
    ip: '127.0.0.1',
    userAgent: 'autocannon',
    requestId: 'floor',
  };
  return { commits, create: (body) => tenancy.createSite(ctx, { ...body, orgId: org.id }) };
}

/** The worker thread of the `worker` layout: runs each turn's batch, answers it once its group is committed. */
async function runWorker() {
  const writer = await siteWriter(workerData.file);
  parentPort.on('message', (batch) => {
    const answers = batch.map(([id, body]) => {
      try {
        return [id, 201, writer.create(body)];
      } catch (err) {
        return [id, 500, { error: String(err) }];
      }
    });
    const send = () => parentPort.postMessage(answers);
    const settled = writer.commits.settled();
    if (settled)
      settled.then(send, (err) => parentPort.postMessage(answers.map(([id]) => [id, 503, { error: String(err) }])));
    else send();
  });
}

/** The bare server of one layout, in this process (a child of the driver): prints its port. */
async function serve(layout, file) {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.get('/health', async () => ({ status: 'ok' }));
  if (layout === 'main') {
    const { installReplyRelease } = await distServer('http/reply-release.js');
    const writer = await siteWriter(file);
    installReplyRelease(app, writer.commits);
    app.post('/sites', async (request, reply) => reply.code(201).send(writer.create(request.body)));
  } else {
    const worker = new Worker(SELF, { workerData: { file } });
    const waiting = new Map();
    let nextId = 0;
    let batch = [];
    worker.on('message', (answers) => {
      for (const [id, status, body] of answers) {
        waiting.get(id)?.code(status).send(body);
        waiting.delete(id);
      }
    });
    app.post('/sites', (request, reply) => {
      if (batch.length === 0)
        setImmediate(() => {
          worker.postMessage(batch);
          batch = [];
        });
      const id = nextId++;
      waiting.set(id, reply);
      batch.push([id, request.body]);
    });
  }
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(JSON.stringify({ url: address }));
  process.on('SIGTERM', () => process.exit(0));
}

/** Starts the bare server of a layout as a child process; resolves with its url and pid. */
function startBare({ children, tmp }, layout) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SELF, '--serve', layout, path.join(tmp, `floor-${layout}.db`)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ url: JSON.parse(line).url, pid: child.pid, stop: () => child.kill('SIGTERM') });
    });
    child.once('exit', (code) => reject(new Error(`the ${layout} server exited ${code} before it listened`)));
  });
}

async function measured(loadRun, pid, url, options) {
  const before = cpuMs(pid);
  const result = await loadRun(url, { connections: CONNECTIONS, seconds: SECONDS, ...options });
  const after = cpuMs(pid);
  const ok = result.statusCodes?.['201'] ?? result.statusCodes?.['200'] ?? 0;
  return { rps: result.rps, cpuUs: ((after - before) * 1000) / result.responses, bad: result.responses - ok };
}

async function drive() {
  const common = await import('./common.js');
  // Fails early, with the hint to build, when dist/ is missing.
  await common.distServer('modules/tenancy/service.js');
  printMachine('write floor: the create-site transaction behind a bare Fastify');
  const table = [['layout', 'health req/s', 'create req/s', 'ratio', 'health CPU µs', 'create CPU µs', 'non-2xx']];
  for (const layout of LAYOUTS) {
    const server = await startBare(common, layout);
    try {
      const rounds = [];
      for (let r = 0; r < ROUNDS; r++) {
        const health = await measured(common.loadRun, server.pid, `${server.url}/health`, {});
        const create = await measured(common.loadRun, server.pid, `${server.url}/sites`, {
          method: 'POST',
          body: { name: 'Bench write', timezone: 'UTC' },
        });
        rounds.push({ health, create, ratio: create.rps / health.rps });
      }
      const m = (f) => median(rounds.map(f));
      table.push([
        layout,
        String(Math.round(m((x) => x.health.rps))),
        String(Math.round(m((x) => x.create.rps))),
        `${round(
          m((x) => x.ratio),
          3,
        )}× (${rounds.map((x) => round(x.ratio, 3)).join(', ')})`,
        String(round(m((x) => x.health.cpuUs))),
        String(round(m((x) => x.create.cpuUs))),
        String(rounds.reduce((n, x) => n + x.health.bad + x.create.bad, 0)),
      ]);
    } finally {
      server.stop();
    }
  }
  printColumns(table);
}

if (!isMainThread) await runWorker();
else if (process.argv[2] === '--serve') await serve(process.argv[3], process.argv[4]);
else await drive();
