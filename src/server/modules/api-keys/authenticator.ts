import { API_KEY_PATTERN, type ApiKeyStatus } from '../../../contract/api-keys.js';
import { transaction, type Db } from '../../db/connection.js';
import { countWrites, type WatchedTable } from '../../db/write-counter.js';
import type { Caller } from '../../context.js';
import { unauthorized } from '../../errors.js';
import { ReadCache } from '../../lib/read-cache.js';
import { sha256Hex } from '../../security/crypto.js';
import { ApiKeyRateLimiter, type RateDecision } from './rate-limiter.js';
import { ApiKeyUsage } from './usage.js';

/** What the authentication path reads, by hash: the key and the state of its organization and partner (one
 * prepared statement on every key request; the partner columns are null when the organization or partner
 * row is missing). */
interface KeyAuthRow {
  id: string;
  orgId: string;
  name: string;
  scopes: string;
  expiresAt: string | null;
  rateLimit: number;
  status: ApiKeyStatus;
  createdBy: string | null;
  partnerId: string | null;
  orgDeletedAt: string | null;
  partnerStatus: string | null;
  partnerDeletedAt: string | null;
}

/** A key that passed every check up to the rate window: its caller when the window admitted the request,
 * null when it refused it; the window's state either way (the guard turns it into X-RateLimit-* headers). */
export interface KeyAuthentication {
  caller: Caller | null;
  rateLimit: RateDecision;
}

/** The partner of the key's organization and its status; a missing or deleted organization or partner reads
 * as "deleted", which the guard refuses like any inactive partner. */
function orgContext(row: KeyAuthRow): { partnerId: string | null; partnerStatus: string } {
  if (row.partnerId === null || row.partnerStatus === null) return { partnerId: null, partnerStatus: 'deleted' };
  return { partnerId: row.partnerId, partnerStatus: row.orgDeletedAt || row.partnerDeletedAt ? 'deleted' : row.partnerStatus };
}

/** How many keys the authenticator keeps by hash. */
const KEPT_KEYS = 1024;

/** Whether two reads of a key found the same values: its caller is a function of the row alone. */
function sameRow(a: KeyAuthRow, b: KeyAuthRow): boolean {
  return (Object.keys(a) as (keyof KeyAuthRow)[]).every((k) => a[k] === b[k]);
}

/**
 * The writes of this connection that can change what a key authenticates as (db/write-counter.ts): the key's row
 * (but not usage_count / last_used_at, written every second by the usage flush), its organization's and its
 * partner's rows. Every other write (a site created, an alert raised) leaves the kept keys alone. Writes by another
 * connection are seen through `data_version` and drop every kept key (lib/read-cache.ts: from the next event-loop
 * turn, at most a millisecond later).
 */
const KEY_WRITES: readonly WatchedTable[] = [
  { table: 'api_keys', columns: ['id', 'org_id', 'name', 'scopes', 'expires_at', 'rate_limit', 'status', 'created_by', 'key_hash'] },
  { table: 'organizations' },
  { table: 'partners' },
];

/** A key found by its hash, and the caller it acts as. */
interface KnownKey {
  row: KeyAuthRow;
  caller: Caller;
}

/** The caller of an API key: the key's organization, its scopes as permissions (01 §5.4). */
function keyCaller(row: KeyAuthRow): Caller {
  const { partnerId, partnerStatus } = orgContext(row);
  return {
    kind: 'apiKey',
    userId: row.createdBy,
    email: null,
    name: row.name,
    scope: 'organization',
    partnerId,
    orgId: row.orgId,
    orgAccess: null,
    orgIds: null,
    siteIds: null,
    deviceGroupIds: null,
    roleId: null,
    permissions: JSON.parse(row.scopes) as string[],
    mfa: false,
    sessionId: null,
    apiKeyId: row.id,
    agentId: null,
    deviceId: null,
    partnerStatus,
  };
}

/**
 * Authentication by API key (01 §5.2), the hot path of every key request: the key by hash (kept while the
 * database is unchanged), status and expiry, the sliding hourly window, and usage counted for a batched write.
 * It knows no HTTP: it returns the caller and the window's state, and the guard writes the headers.
 */
export class ApiKeyAuthenticator {
  readonly usage: ApiKeyUsage;
  readonly limiter: ApiKeyRateLimiter;
  private readonly byHash;
  /** Keys by hash with the caller each one acts as (frozen, the same object request after request), kept until
   * a write that can change one (countKeyWrites; lib/read-cache.ts): a revocation, rotation, expiry, scope or
   * rate-limit change, or a change to the organization or partner, empties it; other writes do not. */
  private readonly keysByHash;
  /** The last key read for each hash, so that a key whose row reads the same after a write elsewhere keeps its
   * caller object (no new caller, and the kept-answer cache's text of it is reused). At most KEPT_KEYS. */
  private readonly lastRead = new Map<string, KnownKey>();
  private readonly markExpired;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.usage = new ApiKeyUsage(db.$client);
    this.limiter = new ApiKeyRateLimiter(db.$client);
    // The key with the organization and partner state it acts in, in one statement (a read-only look at
    // tenancy's rows).
    this.byHash = db.$client.prepare<[string], KeyAuthRow>(
      `SELECT k.id, k.org_id AS orgId, k.name, k.scopes, k.expires_at AS expiresAt, k.rate_limit AS rateLimit,
              k.status, k.created_by AS createdBy, p.id AS partnerId, o.deleted_at AS orgDeletedAt,
              p.status AS partnerStatus, p.deleted_at AS partnerDeletedAt
         FROM api_keys k
         LEFT JOIN organizations o ON o.id = k.org_id
         LEFT JOIN partners p ON p.id = o.partner_id
        WHERE k.key_hash = ?`,
    );
    this.keysByHash = new ReadCache<KnownKey>(db.$client, KEPT_KEYS, Infinity, countWrites(db.$client, 'key_auth', KEY_WRITES));
    this.markExpired = db.$client.prepare<[string, string]>(
      "UPDATE api_keys SET status = 'expired', updated_at = ? WHERE id = ? AND status = 'active'",
    );
  }

  /** Starts the batched writes of usage and rate-window entries (every second). */
  start(intervalMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      try {
        this.flush();
      } catch (err) {
        this.onError(err);
      }
    }, intervalMs);
    this.timer.unref();
  }

  /** Writes the rate-window entries and usage counted since the last flush. */
  flush(): void {
    this.limiter.flush();
    this.usage.flush();
  }

  /** Stops the timer and writes what is left; run before the database closes. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }

  /**
   * An `X-API-Key` value, in the order of 01 §5.2 and the 04 wire notes: format, hash lookup, status, expiry
   * (recorded), the sliding hourly window, usage (counted for the batched write), then the key's organization
   * context. Throws the 401s; a refusal by the window is an answer, not an error (it carries the headers).
   */
  authenticate(raw: string): KeyAuthentication {
    if (raw.length === 0) throw unauthorized('Missing X-API-Key header', 'MISSING_API_KEY');
    if (!API_KEY_PATTERN.test(raw)) throw unauthorized('Invalid API key format', 'INVALID_API_KEY_FORMAT');
    const hash = sha256Hex(raw);
    const known = this.keysByHash.lookup(hash) ?? this.readKey(hash);
    if (!known) throw unauthorized('Invalid API key', 'INVALID_API_KEY');
    const { row, caller } = known;
    if (row.status === 'revoked') throw unauthorized('API key is revoked', 'API_KEY_REVOKED');
    const now = Date.now();
    if (row.status === 'expired') throw unauthorized('API key is expired', 'API_KEY_EXPIRED');
    if (row.expiresAt !== null) {
      const nowIso = new Date(now).toISOString();
      if (row.expiresAt <= nowIso) {
        transaction(this.db, () => this.markExpired.run(nowIso, row.id));
        throw unauthorized('API key is expired', 'API_KEY_EXPIRED');
      }
    }

    const rateLimit = this.limiter.hit(row.id, row.rateLimit, now);
    if (!rateLimit.allowed) return { caller: null, rateLimit };
    this.usage.record(row.id, now);
    return { rateLimit, caller };
  }

  /** The key with this hash from the database and its caller, kept for the next request if there is one
   * (unknown hashes are not kept: guessing cannot fill the cache). */
  private readKey(hash: string): KnownKey | undefined {
    const row = this.byHash.get(hash);
    if (!row) return undefined;
    const previous = this.lastRead.get(hash);
    let known = previous;
    if (previous === undefined || !sameRow(previous.row, row)) {
      known = { row, caller: keyCaller(row) };
      this.lastRead.delete(hash);
      if (this.lastRead.size >= KEPT_KEYS) this.lastRead.delete(this.lastRead.keys().next().value as string);
      this.lastRead.set(hash, known);
    }
    return this.keysByHash.store(hash, known as KnownKey);
  }
}
