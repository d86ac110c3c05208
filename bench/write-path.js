#!/usr/bin/env node
// `node bench/write-path.js` (after `npm run build`; not part of `npm run bench`): what SQLite and the audit
// recorder cost one create-site request when nothing else runs between them. A fresh migrated database (the
// server's pragmas, db/connection.ts), one partner and organization, then groups of 34 members, as the group
// commit makes them under the routes benchmark's load (db/group-commit.ts): per member a SAVEPOINT, the site's
// insertRow, its audit entry (recordAudit: chain head, checksum, insert) and RELEASE; a COMMIT per group. It prints
// CPU µs per member (process.cpuUsage): the median of BENCH_WRITE_ROUNDS rounds of BENCH_WRITE_MEMBERS members.
//
// BENCH_WRITE_VARIANTS lists what to take away, each measured on a database of its own, the full path first:
//   noaudit (the site alone), nosite (the audit entry alone), nofk (foreign keys off),
//   drop:<index> (that index dropped, e.g. drop:audit_logs_time_idx).
// Comparing the printed figure with the service's own time under load (README, "Benchmarks") tells what the
// HTTP work between requests adds to the same statements.
/* global process, console */
import crypto from 'node:crypto';
import path from 'node:path';
import { distServer, tmp } from './common.js';
import { median, printMachine } from './report.js';

const MEMBERS = Number(process.env.BENCH_WRITE_MEMBERS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_WRITE_ROUNDS ?? 5);
const GROUP = 34;
const variants = ['full', ...(process.env.BENCH_WRITE_VARIANTS ?? 'noaudit,nosite').split(',').filter(Boolean)];

const { openDatabase, applyMigrations } = await distServer('db/connection.js');
const schema = await distServer('db/schema/index.js');
const { insertRow } = await distServer('db/prepared.js');
const { recordAudit } = await distServer('modules/audit/recorder.js');

function measure(variant) {
  const db = openDatabase(path.join(tmp, `write-path-${variants.indexOf(variant)}.db`));
  applyMigrations(db);
  const sqlite = db.$client;
  if (variant === 'nofk') sqlite.pragma('foreign_keys = OFF');
  if (variant.startsWith('drop:')) sqlite.exec(`DROP INDEX "${variant.slice(5).replaceAll('"', '')}"`);
  const partner = insertRow(db, schema.partners, { name: 'Bench partner', slug: 'bench-partner' });
  const org = insertRow(db, schema.organizations, { partnerId: partner.id, name: 'Bench org', slug: 'bench-org' });
  // An API key's caller, as the routes benchmark's writes have.
  const ctx = {
    caller: {
      apiKeyId: crypto.randomUUID(),
      agentId: null,
      userId: null,
      partnerId: partner.id,
      email: null,
      siteIds: null,
    },
    ip: '127.0.0.1',
    userAgent: 'autocannon',
    requestId: 'bench',
  };
  const [begin, commit, savepoint, release] = ['BEGIN IMMEDIATE', 'COMMIT', 'SAVEPOINT m', 'RELEASE m'].map((s) =>
    sqlite.prepare(s),
  );
  const member = () => {
    savepoint.run();
    const site =
      variant === 'nosite'
        ? { id: crypto.randomUUID(), name: 'Bench write' }
        : insertRow(db, schema.sites, { orgId: org.id, name: 'Bench write', timezone: 'UTC', settings: {} });
    if (variant !== 'noaudit') {
      recordAudit(db, ctx, {
        action: 'site.create',
        resourceType: 'site',
        resourceId: site.id,
        resourceName: site.name,
        orgId: org.id,
        partnerId: partner.id,
      });
    }
    release.run();
  };
  const round = (members) => {
    const started = process.cpuUsage();
    for (let done = 0; done < members; done += GROUP) {
      begin.run();
      for (let i = 0; i < GROUP; i++) member();
      commit.run();
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / members;
  };
  round(MEMBERS / 4); // warm-up
  const figures = Array.from({ length: ROUNDS }, () => round(MEMBERS));
  sqlite.close();
  return median(figures);
}

printMachine("write path: one create-site request's SQLite and audit work, in a loop");
for (const variant of variants) console.log(`${variant.padEnd(32)} ${measure(variant).toFixed(1)} µs CPU per member`);
