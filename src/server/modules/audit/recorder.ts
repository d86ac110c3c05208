import { isIP } from 'node:net';
import { asc, desc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { driverValue, preparedQueries, rawStatement, rowQuery } from '../../db/prepared.js';
import { auditLogs } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { sha256Hex } from '../../security/crypto.js';
import { stableStringify } from '../../lib/stable-json.js';
import { newId } from '../../db/ids.js';
import { partnerIdOfOrg } from '../tenancy/access.js';

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
export const GENESIS = '0'.repeat(64);

export interface AuditEntry {
  action: string;
  resourceType: string;
  resourceId?: string | null;
  resourceName?: string | null;
  orgId?: string | null;
  partnerId?: string | null;
  details?: Record<string, unknown>;
  result?: 'success' | 'failure' | 'denied';
  errorMessage?: string | null;
}

type AuditRow = typeof auditLogs.$inferSelect;

export function chainOf(orgId: string | null | undefined, partnerId: string | null | undefined): string {
  if (orgId) return `o:${orgId}`;
  if (partnerId) return `p:${partnerId}`;
  return 'platform';
}

/** The fields a checksum covers: everything but the checksum itself. */
export function checksumOf(row: Omit<AuditRow, 'checksum'>): string {
  const { prevChecksum, ...fields } = row;
  return sha256Hex(`${prevChecksum}\n${stableStringify(fields)}`);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** SQLite stores text as UTF-8, where a lone UTF-16 surrogate (valid in a JS string, and in JSON as
 * "\ud800") cannot be represented: the text read back would differ from the text the checksum covered and
 * verification would report tampering. Such code units become U+FFFD before anything is hashed. */
function wellFormed<T extends string | null>(value: T): T {
  return (value === null ? null : value.replace(LONE_SURROGATE, '\uFFFD')) as T;
}

/** 03 §2.6: ipAddress is IPv4 (dotted quad) or IPv6, at most 45 characters; anything else is kept only in
 * details. */
function ipOrNull(ip: string | null): string | null {
  return ip !== null && ip.length <= 45 && isIP(ip) !== 0 ? ip : null;
}

type AuditField = Exclude<keyof AuditRow, 'checksum' | 'prevChecksum'>;
const COLUMNS = getTableColumns(auditLogs);
/** The fields a checksum covers, in the order stableStringify writes them (sorted; no key is an array index). */
const CHECKSUM_FIELDS = (Object.keys(COLUMNS) as (keyof AuditRow)[])
  .filter((k): k is AuditField => k !== 'checksum' && k !== 'prevChecksum')
  .sort()
  .map((key) => {
    // checksumText writes every column but details with JSON.stringify, which sorts no keys: only a string or a
    // number column may join them (a second JSON column would need stableStringify, as details has).
    const { dataType } = COLUMNS[key];
    if (key !== 'details' && dataType !== 'string' && dataType !== 'number') {
      throw new Error(`audit_logs.${key} (${dataType}): checksumText writes plain columns only`);
    }
    return { key, label: `${JSON.stringify(key)}:` };
  });

/**
 * The text checksumOf hashes after the previous checksum, built field by field from the row (its checksum and
 * prevChecksum are not read): the same text as stableStringify of the other fields
 * (test/server/audit-recorder.test.ts compares them), with details given as the stable JSON already made for the
 * row, so an entry's details are serialized once, for the checksum and the column.
 */
function checksumText(fields: AuditRow, detailsJson: string): string {
  let text = '{';
  for (const { key, label } of CHECKSUM_FIELDS) {
    const value = fields[key];
    if (value === undefined) continue;
    // Every other column is a string, a number or null (checked above), which JSON.stringify writes as
    // stableStringify does.
    text += `${text.length > 1 ? ',' : ''}${label}${key === 'details' ? detailsJson : JSON.stringify(value)}`;
  }
  return `${text}}`;
}

/**
 * What every audited write runs, prepared once per database (db/prepared.ts) and run by better-sqlite3 itself:
 * the head of the entry's chain (one seek in audit_logs_chain_seq_unique, rows as arrays) and an insert that
 * names every column and returns nothing (the caller already holds the row). drizzle builds the SQL once, from
 * the table, so a column added to audit_logs is written here too.
 */
const auditStatements = preparedQueries((db) => {
  const head = rawStatement(
    db,
    db
      .select({ seq: auditLogs.seq, checksum: auditLogs.checksum })
      .from(auditLogs)
      .where(eq(auditLogs.chain, sql.placeholder('chain')))
      .orderBy(desc(auditLogs.seq))
      .limit(1),
  );
  const names = Object.keys(COLUMNS);
  const insert = rawStatement(
    db,
    db.insert(auditLogs).values(Object.fromEntries(names.map((n) => [n, sql`${sql.placeholder(n)}`])) as never),
  );
  return {
    /** seq and checksum of the chain's last entry. */
    head(chain: string): { seq: number; checksum: string } | undefined {
      // The statement is shared by SQL text on this connection (db/connection.ts): its mode is set at each use.
      const row = head.stmt.raw(true).get(head.bind({ chain })) as [number, string] | undefined;
      return row && { seq: row[0], checksum: row[1] };
    },
    insert(row: AuditRow, detailsJson: string): void {
      const values: Record<string, unknown> = {};
      for (const name of names) {
        const value = row[name as keyof AuditRow];
        values[name] = name === 'details' ? detailsJson : driverValue(COLUMNS[name as keyof AuditRow], value);
      }
      insert.stmt.run(insert.bind(values));
    },
  };
});

/**
 * Appends an audit entry (03 §2.6) inside the caller's transaction. Each entry's checksum covers its fields
 * and the previous entry's checksum in the same chain, so an edited or deleted row breaks verification.
 */
export function recordAudit(tx: Db, ctx: RequestContext, entry: AuditEntry): AuditRow {
  const { caller } = ctx;
  const orgId = entry.orgId ?? null;
  const statements = auditStatements(tx);
  // An organization's entry belongs to that organization's partner, whoever wrote it (a system administrator or
  // job has no partner): its partner sees it (03 §2.6). Looked up only for an entry naming no partner.
  const partnerId =
    entry.partnerId !== undefined ? entry.partnerId : ((orgId !== null ? partnerIdOfOrg(tx, orgId) : undefined) ?? caller.partnerId);
  const chain = chainOf(orgId, partnerId);
  const last = statements.head(chain);

  const rawActorId = caller.apiKeyId ?? caller.agentId ?? caller.userId;
  const actorType = caller.apiKeyId ? 'api_key' : caller.agentId ? 'agent' : caller.userId ? 'user' : 'system';
  const details: Record<string, unknown> = { ...(entry.details ?? {}) };
  // 03 §2.6: non-UUID actor and resource ids are stored as the zero UUID with the original in details.
  let actorId = rawActorId ?? ZERO_UUID;
  if (!UUID_RE.test(actorId)) {
    details.rawActorId = actorId;
    actorId = ZERO_UUID;
  }
  let resourceId = entry.resourceId ?? null;
  if (resourceId !== null && !UUID_RE.test(resourceId)) {
    details.rawResourceId = resourceId;
    resourceId = ZERO_UUID;
  }
  const ipAddress = ipOrNull(ctx.ip);
  if (ctx.ip && ipAddress === null) details.rawIpAddress = ctx.ip.slice(0, 100);

  const row: AuditRow = {
    id: newId(),
    orgId,
    partnerId: partnerId ?? null,
    chain,
    seq: (last?.seq ?? 0) + 1,
    timestamp: new Date().toISOString(),
    actorType,
    actorId,
    actorEmail: wellFormed(caller.email?.slice(0, 255) ?? null),
    action: wellFormed(entry.action.slice(0, 100)),
    resourceType: wellFormed(entry.resourceType.slice(0, 50)),
    resourceId,
    resourceName: wellFormed(entry.resourceName?.slice(0, 255) ?? null),
    details,
    ipAddress,
    userAgent: wellFormed(ctx.userAgent ?? null),
    result: entry.result ?? 'success',
    errorMessage: wellFormed(entry.errorMessage ?? null),
    prevChecksum: last?.checksum ?? GENESIS,
    checksum: '',
  };
  // checksumOf(row), with the details serialized once (stored as this same text: JSON with sorted keys).
  const detailsJson = stableStringify(details);
  row.checksum = sha256Hex(`${row.prevChecksum}\n${checksumText(row, detailsJson)}`);
  statements.insert(row, detailsJson);
  return row;
}

export interface ChainReport {
  chain: string;
  entries: number;
  valid: boolean;
  /** The first entry whose checksum or link does not hold, with why. */
  firstBroken: { id: string | null; seq: number; reason: string } | null;
}

/** The rows of the chain `chain` in seq order, prepared once per database. */
const chainRowsOf = preparedQueries((db) => rowQuery(db, auditLogs, eq(auditLogs.chain, sql.placeholder('chain')), { orderBy: [asc(auditLogs.seq)] }));

/** Walks one chain in seq order and checks every link and checksum; a missing seq is a deleted row. */
export function verifyChain(db: Db, chain: string): ChainReport {
  const rows = chainRowsOf(db).all({ chain });
  let prev = GENESIS;
  let expectedSeq = 1;
  let entries = 0;
  for (const row of rows) {
    entries++;
    const { checksum, ...rest } = row;
    let reason: string | null = null;
    if (row.seq !== expectedSeq) reason = `entry ${expectedSeq} is missing`;
    else if (row.prevChecksum !== prev) reason = 'link to the previous entry does not match';
    else if (checksumOf(rest) !== checksum) reason = 'checksum does not match the entry';
    if (reason) {
      return { chain, entries, valid: false, firstBroken: { id: row.id, seq: row.seq, reason } };
    }
    prev = checksum;
    expectedSeq++;
  }
  return { chain, entries, valid: true, firstBroken: null };
}
