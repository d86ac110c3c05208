import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileSecretStore, credentialsFilePath, openSecretStore } from '../../src/cli/secret-store.js';
import type { KeyringModule } from '../../src/cli/secret-store.js';

let dir: string;
let configDir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-secrets-'));
  configDir = path.join(dir, 'config', 'svc');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** A keyring binding whose every call hangs, like a Secret Service that never answers. */
const hangingKeyring = (): KeyringModule => ({
  AsyncEntry: class {
    getPassword = () => new Promise<string | null>(() => {});
    setPassword = () => new Promise<void>(() => {});
    deletePassword = () => new Promise<boolean>(() => {});
  },
});

/** An in-memory keychain, to check the keychain path itself. */
function memoryKeyring(): { module: KeyringModule; data: Map<string, string>; options: unknown[] } {
  const data = new Map<string, string>();
  const options: unknown[] = [];
  return {
    data,
    options,
    module: {
      AsyncEntry: class {
        constructor(
          private readonly service: string,
          private readonly account: string,
          opts?: unknown,
        ) {
          options.push(opts);
        }
        private get key() {
          return `${this.service}/${this.account}`;
        }
        getPassword = async () => data.get(this.key) ?? null;
        setPassword = async (value: string) => {
          data.set(this.key, value);
        };
        deletePassword = async () => data.delete(this.key);
      },
    },
  };
}

describe('file secret store', () => {
  it('CLI.md credentials: creates an owner-only file in an owner-only directory, round-trips and deletes', async () => {
    const store = new FileSecretStore(configDir);
    expect(await store.get('default:accessToken')).toBeUndefined();
    expect(fs.existsSync(configDir)).toBe(false);

    await store.set('default:accessToken', 'tok-1');
    await store.set('default:refreshToken', 'ref-1');
    const file = credentialsFilePath(configDir);
    expect(mode(file)).toBe(0o600);
    expect(mode(configDir)).toBe(0o700);
    expect(await store.get('default:accessToken')).toBe('tok-1');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      'default:accessToken': 'tok-1',
      'default:refreshToken': 'ref-1',
    });

    await store.delete('default:accessToken');
    expect(await store.get('default:accessToken')).toBeUndefined();
    expect(await store.get('default:refreshToken')).toBe('ref-1');
    await store.delete('default:refreshToken');
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readdirSync(configDir)).toEqual([]);
  });

  it('re-tightens a file whose mode was widened, on every write', async () => {
    const store = new FileSecretStore(configDir);
    await store.set('a', '1');
    fs.chmodSync(credentialsFilePath(configDir), 0o644);
    await store.set('b', '2');
    expect(mode(credentialsFilePath(configDir))).toBe(0o600);
  });

  it('reports a corrupt file clearly', async () => {
    fs.mkdirSync(configDir, { recursive: true });
    fs.writeFileSync(credentialsFilePath(configDir), '{nope');
    await expect(new FileSecretStore(configDir).get('a')).rejects.toThrow(/credentials file .* is not valid JSON/);
    fs.writeFileSync(credentialsFilePath(configDir), '{"a": 1}');
    await expect(new FileSecretStore(configDir).get('a')).rejects.toThrow(/malformed/);
  });
});

describe('openSecretStore', () => {
  it('uses the file without a word when the file is asked for', async () => {
    const onFallback = vi.fn();
    const store = await openSecretStore({ configDir, prefer: 'file', onFallback });
    expect(store.kind).toBe('file');
    expect(onFallback).not.toHaveBeenCalled();
  });

  it('CLI.md keychain rules: on Linux without a D-Bus session bus, falls back to the file and says so once', async () => {
    const onFallback = vi.fn();
    const loadKeyring = vi.fn(async () => memoryKeyring().module);
    const store = await openSecretStore({
      configDir,
      prefer: 'keychain',
      onFallback,
      env: {},
      platform: 'linux',
      loadKeyring,
    });
    expect(store.kind).toBe('file');
    expect(loadKeyring).not.toHaveBeenCalled();
    await store.set('default:apiKey', 'k');
    expect(await store.get('default:apiKey')).toBe('k');
    expect(mode(credentialsFilePath(configDir))).toBe(0o600);
    expect(onFallback).toHaveBeenCalledTimes(1);
    expect(onFallback.mock.calls[0]?.[0]).toBe(
      `No OS keychain available; storing credentials in ${credentialsFilePath(configDir)} (mode 0600)`,
    );
  });

  it('falls back on this machine with the real binding (no Secret Service answers)', async () => {
    const onFallback = vi.fn();
    const store = await openSecretStore({ configDir, onFallback, timeoutMs: 3000 });
    if (process.platform === 'linux' && !process.env.DBUS_SESSION_BUS_ADDRESS) {
      expect(store.kind).toBe('file');
      expect(onFallback).toHaveBeenCalledTimes(1);
    }
  });

  it('falls back when the Secret Service probe does not answer within the timeout', async () => {
    const onFallback = vi.fn();
    const store = await openSecretStore({
      configDir,
      onFallback,
      env: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' },
      platform: 'linux',
      timeoutMs: 20,
      loadKeyring: async () => hangingKeyring(),
    });
    expect(store.kind).toBe('file');
    expect(onFallback).toHaveBeenCalledTimes(1);
  });

  it('falls back when the binding cannot be loaded', async () => {
    const onFallback = vi.fn();
    const store = await openSecretStore({
      configDir,
      onFallback,
      platform: 'darwin',
      loadKeyring: () => Promise.reject(new Error('no prebuilt binary')),
    });
    expect(store.kind).toBe('file');
    expect(onFallback).toHaveBeenCalledTimes(1);
  });

  it('uses a keychain that answers, pinned to the Secret Service on Linux', async () => {
    const keyring = memoryKeyring();
    const store = await openSecretStore({
      configDir,
      env: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus' },
      platform: 'linux',
      loadKeyring: async () => keyring.module,
    });
    expect(store.kind).toBe('keychain');
    await store.set('default:accessToken', 't');
    expect(keyring.data.get('svc/default:accessToken')).toBe('t');
    expect(await store.get('default:accessToken')).toBe('t');
    await store.delete('default:accessToken');
    expect(keyring.data.size).toBe(0); // the probe entry is gone too
    expect(keyring.options.every((o) => JSON.stringify(o) === '{"linux":{"store":"secret-service"}}')).toBe(true);
    expect(fs.existsSync(credentialsFilePath(configDir))).toBe(false);
  });

  it('every keychain call times out into the file, and the fallback message comes once', async () => {
    let hang = false;
    const keyring = memoryKeyring();
    const AsyncEntry = keyring.module.AsyncEntry;
    if (!AsyncEntry) throw new Error('unreachable');
    const flaky: KeyringModule = {
      AsyncEntry: class extends AsyncEntry {
        override getPassword = () => (hang ? new Promise<string | null>(() => {}) : super.getPassword());
      },
    };
    const onFallback = vi.fn();
    const store = await openSecretStore({
      configDir,
      onFallback,
      platform: 'darwin',
      timeoutMs: 20,
      loadKeyring: async () => flaky,
    });
    expect(store.kind).toBe('keychain');
    hang = true;
    expect(await store.get('x')).toBeUndefined();
    expect(store.kind).toBe('file');
    await store.set('x', 'v');
    expect(await store.get('x')).toBe('v');
    expect(mode(credentialsFilePath(configDir))).toBe(0o600);
    expect(onFallback).toHaveBeenCalledTimes(1);
  });
});
