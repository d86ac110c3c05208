import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { z } from 'zod';
import { OpsError } from '../ops/errors.js';
import { ensurePrivateDir, writePrivateFile } from '../ops/files.js';
import { SecretBox } from './crypto.js';

export interface ServerSecrets {
  jwtSecret: string;
  encryptionKey: string;
  enrollmentPepper: string;
}

const SecretsFileSchema = z.object({
  jwtSecret: z.string().min(32),
  encryptionKey: z.string().regex(/^[0-9a-f]{64}$/i),
  enrollmentPepper: z.string().min(32),
});

export const SECRETS_FILE = 'secrets.json';

/** The server_meta row that holds the key check: HMACs of a fixed text under the keys the database's data
 * depends on (the encryption key seals MFA secrets and stored responses; the enrollment pepper hashes
 * enrollment keys). It tells whether keys belong to the database without revealing them. The JWT secret is not
 * in it: it signs access tokens of 15 minutes only, and changing it just signs everyone's tokens out. */
export const KEY_CHECK_META = 'serverKeyCheck';
const KEY_CHECK_TEXT = 'svc server key check v1';

type CheckedKey = 'encryptionKey' | 'enrollmentPepper';
const CHECKED: readonly CheckedKey[] = ['encryptionKey', 'enrollmentPepper'];
const KEY_NAMES: Record<CheckedKey, string> = {
  encryptionKey: 'encryption key (SVC_ENCRYPTION_KEY)',
  enrollmentPepper: 'enrollment pepper (SVC_ENROLLMENT_PEPPER)',
};

const KeyCheckSchema = z.object({ version: z.literal(1), encryptionKey: z.string(), enrollmentPepper: z.string() });
type KeyCheck = z.infer<typeof KeyCheckSchema>;

/** Reads a secrets file (the data dir's, or one written beside a backup); undefined when there is none. */
export function readSecretsFile(file: string): ServerSecrets | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = SecretsFileSchema.safeParse(json);
  if (!parsed.success)
    throw new OpsError(
      `${file} is not a valid secrets file (jwtSecret, encryptionKey, enrollmentPepper)`,
      8,
      'SECRETS_INVALID',
    );
  return parsed.data;
}

export function generateServerSecrets(): ServerSecrets {
  return {
    jwtSecret: randomBytes(48).toString('base64url'),
    encryptionKey: randomBytes(32).toString('hex'),
    enrollmentPepper: randomBytes(32).toString('base64url'),
  };
}

/** The keys a server on `dataDir` would use: each from the environment when given, else from the data dir's
 * file (or `file`); undefined when some key has neither (a start would generate new ones). */
export function effectiveSecrets(
  fromEnv: Partial<ServerSecrets>,
  stored: ServerSecrets | undefined,
): ServerSecrets | undefined {
  const jwtSecret = fromEnv.jwtSecret ?? stored?.jwtSecret;
  const encryptionKey = fromEnv.encryptionKey ?? stored?.encryptionKey;
  const enrollmentPepper = fromEnv.enrollmentPepper ?? stored?.enrollmentPepper;
  return jwtSecret && encryptionKey && enrollmentPepper ? { jwtSecret, encryptionKey, enrollmentPepper } : undefined;
}

function keyCheckOf(secrets: ServerSecrets): KeyCheck {
  const mac = (key: Buffer | string) => createHmac('sha256', key).update(KEY_CHECK_TEXT).digest('hex');
  return {
    version: 1,
    encryptionKey: mac(Buffer.from(secrets.encryptionKey, 'hex')),
    enrollmentPepper: mac(secrets.enrollmentPepper),
  };
}

function hasTable(sqlite: Database.Database, name: string): boolean {
  return sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function hasColumn(sqlite: Database.Database, table: string, column: string): boolean {
  return (sqlite.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column);
}

function storedKeyCheck(sqlite: Database.Database): KeyCheck | undefined {
  if (!hasTable(sqlite, 'server_meta')) return undefined;
  const row = sqlite.prepare('SELECT value FROM server_meta WHERE key = ?').get(KEY_CHECK_META) as
    | { value: string }
    | undefined;
  if (!row) return undefined;
  try {
    return KeyCheckSchema.parse(JSON.parse(row.value));
  } catch {
    return undefined;
  }
}

/** A few values sealed with the encryption key, for a database written before the key check existed. */
function sealedSamples(sqlite: Database.Database): string[] {
  const samples: string[] = [];
  const sources: [string, string, string][] = [
    ['users', 'mfa_secret_enc', 'mfa_secret_enc IS NOT NULL'],
    ['users', 'mfa_pending_secret_enc', 'mfa_pending_secret_enc IS NOT NULL'],
    ['idempotency_keys', 'body', "body LIKE 'v1.%'"],
  ];
  for (const [table, column, where] of sources) {
    if (!hasTable(sqlite, table) || !hasColumn(sqlite, table, column)) continue;
    const rows = sqlite.prepare(`SELECT ${column} AS v FROM ${table} WHERE ${where} LIMIT 3`).all() as { v: string }[];
    samples.push(...rows.map((r) => r.v));
  }
  return samples;
}

export type KeyComparison =
  /** The database records the check and these keys pass it. */
  | { state: 'match' }
  /** Keys the database's data cannot be used with, by name. */
  | { state: 'mismatch'; keys: CheckedKey[] }
  /** No check recorded (a database from before it existed, or a new one): `sealed` tells whether these keys
   * opened the sealed values it has (true), or there were none to try (false). */
  | { state: 'unchecked'; sealed: boolean };

/** Whether `secrets` belong to the database. */
export function compareServerKeys(sqlite: Database.Database, secrets: ServerSecrets): KeyComparison {
  const recorded = storedKeyCheck(sqlite);
  if (recorded) {
    const mine = keyCheckOf(secrets);
    const keys = CHECKED.filter((k) => recorded[k] !== mine[k]);
    return keys.length > 0 ? { state: 'mismatch', keys } : { state: 'match' };
  }
  const samples = sealedSamples(sqlite);
  if (samples.length === 0) return { state: 'unchecked', sealed: false };
  const box = new SecretBox(secrets.encryptionKey);
  for (const sealed of samples) {
    try {
      box.open(sealed);
    } catch {
      return { state: 'mismatch', keys: ['encryptionKey'] };
    }
  }
  return { state: 'unchecked', sealed: true };
}

/** Whether the database holds data that only its own keys can read: a key check, or sealed values. */
export function databaseNeedsItsKeys(sqlite: Database.Database): boolean {
  return storedKeyCheck(sqlite) !== undefined || sealedSamples(sqlite).length > 0;
}

/** Records the key check of `secrets` in the database (server_meta), unless one is there. */
export function recordKeyCheck(sqlite: Database.Database, secrets: ServerSecrets): void {
  sqlite
    .prepare('INSERT INTO server_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING')
    .run(KEY_CHECK_META, JSON.stringify(keyCheckOf(secrets)));
}

const FIX = (dataDir: string) =>
  `Put back the ${SECRETS_FILE} that belongs to this database in ${dataDir} (\`svc server restore BACKUP --with-secrets\` restores the one \`svc server backup --with-secrets\` saved beside BACKUP), or give its keys with SVC_ENCRYPTION_KEY and SVC_ENROLLMENT_PEPPER.`;

/** The refusal when keys cannot be used with a database. */
export function keysMismatchError(databaseFile: string, dataDir: string, keys: readonly CheckedKey[], source: string): OpsError {
  return new OpsError(
    `The server keys (${source}) do not belong to the database ${databaseFile}: its ${keys.map((k) => KEY_NAMES[k]).join(' and ')} differ, so what it encrypted or hashed (MFA secrets, enrollment keys) could not be read`,
    6,
    'SERVER_KEYS_MISMATCH',
    FIX(dataDir),
  );
}

export function keysMissingError(databaseFile: string, dataDir: string): OpsError {
  return new OpsError(
    `The database ${databaseFile} was written under server keys that are not here: there is no ${path.join(dataDir, SECRETS_FILE)} and the environment does not give them`,
    6,
    'SERVER_KEYS_MISSING',
    FIX(dataDir),
  );
}

/** Where the keys come from, for messages. */
export function keysSource(dataDir: string, fromEnv: Partial<ServerSecrets>): string {
  const env = Object.values(fromEnv).some(Boolean);
  const file = path.join(dataDir, SECRETS_FILE);
  if (env && fromEnv.jwtSecret && fromEnv.encryptionKey && fromEnv.enrollmentPepper) return 'the environment';
  return env ? `${file} and the environment` : file;
}

/**
 * Server keys: from the environment when given, else generated once into the data dir (0600). With the
 * server's database, the keys are checked against it first: keys that cannot read its data stop the start
 * (SERVER_KEYS_MISMATCH), and so does a database that needs keys that are not here (SERVER_KEYS_MISSING: no new
 * ones are generated over a lost file). A database without the check gets it recorded.
 */
export function loadServerSecrets(
  dataDir: string,
  fromEnv: Partial<ServerSecrets>,
  sqlite?: Database.Database,
): ServerSecrets {
  const file = path.join(dataDir, SECRETS_FILE);
  const stored = readSecretsFile(file);
  let secrets = effectiveSecrets(fromEnv, stored);
  if (!secrets) {
    if (sqlite && databaseNeedsItsKeys(sqlite)) throw keysMissingError(sqlite.name, dataDir);
    const generated = generateServerSecrets();
    ensurePrivateDir(dataDir);
    writePrivateFile(file, `${JSON.stringify(generated, null, 2)}\n`, { exclusive: true });
    secrets = effectiveSecrets(fromEnv, generated) ?? generated;
  }
  if (sqlite) {
    const comparison = compareServerKeys(sqlite, secrets);
    if (comparison.state === 'mismatch')
      throw keysMismatchError(sqlite.name, dataDir, comparison.keys, keysSource(dataDir, fromEnv));
    if (comparison.state === 'unchecked') recordKeyCheck(sqlite, secrets);
  }
  return secrets;
}
