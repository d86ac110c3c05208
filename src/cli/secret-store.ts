import { chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Random hex from the global Web Crypto (node:crypto would load on every command that opens the store). */
const randomHex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');

/**
 * Where tokens and API keys live (CLI.md "Connection and credentials"): the OS keychain when one answers,
 * else `<configDir>/credentials.json`, readable only by the owner.
 */
export interface SecretStore {
  /** The backend in use now; a keychain store turns into a file store after its first failure. */
  readonly kind: 'keychain' | 'file';
  /** Human-readable location, for `svc whoami`. */
  readonly location: string;
  get(account: string): Promise<string | undefined>;
  set(account: string, value: string): Promise<void>;
  delete(account: string): Promise<void>;
}

export type SecretStorage = 'keychain' | 'file';

export interface OpenSecretStoreOptions {
  configDir: string;
  /** `auto` (default) and `keychain` both fall back to the file when no keychain answers; `file` never tries. */
  prefer?: SecretStorage | 'auto';
  /** Told once, when the file is used because the keychain did not answer. */
  onFallback?: (message: string) => void;
  /** For tests: the keychain call timeout (default 3 s), the environment and platform, the binding. */
  timeoutMs?: number;
  env?: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  loadKeyring?: () => Promise<KeyringModule>;
}

export const KEYCHAIN_SERVICE = 'svc';
const KEYCHAIN_TIMEOUT_MS = 3000;
const PROBE_ACCOUNT = 'svc-keychain-probe';

/** The subset of `@napi-rs/keyring` used here, so tests can substitute it. */
interface KeyringEntryOptions {
  linux?: { store?: 'secret-service' | 'keyutils' };
}
interface AsyncKeyringEntry {
  getPassword(): Promise<string | null>;
  setPassword(password: string): Promise<void>;
  deletePassword(): Promise<boolean>;
}
interface SyncKeyringEntry {
  getPassword(): string | null;
  setPassword(password: string): void;
  deletePassword(): boolean;
}
export interface KeyringModule {
  AsyncEntry?: new (service: string, account: string, options?: KeyringEntryOptions) => AsyncKeyringEntry;
  Entry?: new (service: string, account: string, options?: KeyringEntryOptions) => SyncKeyringEntry;
}

/** The credentials file's shape, `{ account: secret }`, checked by hand: zod costs more to load than the file. */
function isCredentials(value: unknown): value is Record<string, string> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((v) => typeof v === 'string')
  );
}

export function credentialsFilePath(configDir: string): string {
  return path.join(configDir, 'credentials.json');
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}

export class FileSecretStore implements SecretStore {
  readonly kind = 'file';
  readonly location: string;

  constructor(private readonly configDir: string) {
    this.location = credentialsFilePath(configDir);
  }

  async get(account: string): Promise<string | undefined> {
    const secrets = await this.read();
    return Object.hasOwn(secrets, account) ? secrets[account] : undefined;
  }

  async set(account: string, value: string): Promise<void> {
    const secrets = await this.read();
    secrets[account] = value;
    await this.write(secrets);
  }

  async delete(account: string): Promise<void> {
    const secrets = await this.read();
    if (!Object.hasOwn(secrets, account)) return;
    delete secrets[account];
    if (Object.keys(secrets).length === 0) await unlink(this.location).catch(ignoreMissing);
    else await this.write(secrets);
  }

  private async read(): Promise<Record<string, string>> {
    let text: string;
    try {
      text = await readFile(this.location, 'utf8');
    } catch (error) {
      if (isErrnoException(error) && error.code === 'ENOENT') return {};
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`The credentials file ${this.location} is not valid JSON; remove it and run \`svc login\` again`);
    }
    if (!isCredentials(parsed)) {
      throw new Error(`The credentials file ${this.location} is malformed; remove it and run \`svc login\` again`);
    }
    return { ...parsed };
  }

  /** Atomic replace: a crash never leaves a half-written file, and the secrets are never world-readable. */
  private async write(secrets: Record<string, string>): Promise<void> {
    await mkdir(this.configDir, { recursive: true, mode: 0o700 });
    const temp = `${this.location}.${process.pid}.${randomHex(6)}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      await chmod(temp, 0o600);
      await rename(temp, this.location);
    } catch (error) {
      await unlink(temp).catch(ignoreMissing);
      throw error;
    }
    await chmod(this.location, 0o600);
  }
}

function ignoreMissing(error: unknown): void {
  if (!(isErrnoException(error) && error.code === 'ENOENT')) throw error;
}

/** Rejects when `promise` has not settled within `ms`; the timer never keeps the process alive. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`keychain did not answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface KeychainBackend {
  get(account: string): Promise<string | undefined>;
  set(account: string, value: string): Promise<void>;
  delete(account: string): Promise<void>;
}

function keychainBackend(keyring: KeyringModule, platform: NodeJS.Platform): KeychainBackend {
  // Pinned to the Secret Service on Linux: the binding's default would fall back to the kernel keyring,
  // which a reboot wipes. Elsewhere the option is ignored.
  const options: KeyringEntryOptions | undefined =
    platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined;
  const { AsyncEntry, Entry } = keyring;
  // The synchronous Entry blocks the event loop, so the timeout cannot interrupt it; AsyncEntry is preferred.
  const entry = (account: string): AsyncKeyringEntry | SyncKeyringEntry => {
    if (AsyncEntry) return new AsyncEntry(KEYCHAIN_SERVICE, account, options);
    if (Entry) return new Entry(KEYCHAIN_SERVICE, account, options);
    throw new Error('@napi-rs/keyring exports no Entry');
  };
  return {
    async get(account) {
      return (await entry(account).getPassword()) ?? undefined;
    },
    async set(account, value) {
      await entry(account).setPassword(value);
    },
    async delete(account) {
      await entry(account).deletePassword();
    },
  };
}

async function probeKeychain(backend: KeychainBackend): Promise<void> {
  const value = randomHex(8);
  await backend.set(PROBE_ACCOUNT, value);
  const read = await backend.get(PROBE_ACCOUNT);
  await backend.delete(PROBE_ACCOUNT);
  if (read !== value) throw new Error('keychain probe read back a different value');
}

class KeychainSecretStore implements SecretStore {
  private fallenBack = false;

  constructor(
    private readonly backend: KeychainBackend,
    private readonly file: FileSecretStore,
    private readonly timeoutMs: number,
    private readonly fallBack: () => void,
  ) {}

  get kind(): SecretStorage {
    return this.fallenBack ? 'file' : 'keychain';
  }

  get location(): string {
    return this.fallenBack ? this.file.location : `OS keychain (service "${KEYCHAIN_SERVICE}")`;
  }

  get(account: string): Promise<string | undefined> {
    return this.call(
      (b) => b.get(account),
      () => this.file.get(account),
    );
  }

  set(account: string, value: string): Promise<void> {
    return this.call(
      (b) => b.set(account, value),
      () => this.file.set(account, value),
    );
  }

  delete(account: string): Promise<void> {
    return this.call(
      (b) => b.delete(account),
      () => this.file.delete(account),
    );
  }

  /** Once the keychain fails or times out, the rest of the process uses the file rather than wait again. */
  private async call<T>(viaKeychain: (b: KeychainBackend) => Promise<T>, viaFile: () => Promise<T>): Promise<T> {
    if (!this.fallenBack) {
      try {
        return await withTimeout(viaKeychain(this.backend), this.timeoutMs);
      } catch {
        this.fallenBack = true;
        this.fallBack();
      }
    }
    return viaFile();
  }
}

export async function openSecretStore(options: OpenSecretStoreOptions): Promise<SecretStore> {
  const {
    configDir,
    prefer = 'auto',
    onFallback,
    timeoutMs = KEYCHAIN_TIMEOUT_MS,
    env = process.env,
    platform = process.platform,
    loadKeyring = () => import('@napi-rs/keyring'),
  } = options;
  const file = new FileSecretStore(configDir);
  if (prefer === 'file') return file;

  let told = false;
  const fallBack = () => {
    if (told) return;
    told = true;
    onFallback?.(`No OS keychain available; storing credentials in ${file.location} (mode 0600)`);
  };

  // On Linux only a Secret Service reached over D-Bus counts; without a session bus there is none to ask.
  if (platform === 'linux' && !env.DBUS_SESSION_BUS_ADDRESS) {
    fallBack();
    return file;
  }
  try {
    const backend = keychainBackend(await withTimeout(loadKeyring(), timeoutMs), platform);
    if (platform === 'linux') await withTimeout(probeKeychain(backend), timeoutMs);
    return new KeychainSecretStore(backend, file, timeoutMs, fallBack);
  } catch {
    fallBack();
    return file;
  }
}
