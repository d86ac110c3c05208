import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../src/cli/prompts.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_BASE_URL,
  ProfileStore,
  defaultConfigDir,
  resolveConnection,
  secretAccount,
  secretAccounts,
} from '../../src/cli/profiles.js';
import type { Profile } from '../../src/cli/profiles.js';

let dir: string;
let configDir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-profiles-'));
  configDir = path.join(dir, 'svc');
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const prod: Profile = {
  baseUrl: 'https://prod.example.com',
  email: 'ops@example.com',
  authKind: 'password',
  storage: 'file',
};
const stage: Profile = { baseUrl: 'https://stage.example.com/', authKind: 'apiKey' };
const local: Profile = { baseUrl: 'http://127.0.0.1:4000', authKind: 'sso' };

async function seeded(current?: string): Promise<ProfileStore> {
  const store = new ProfileStore({ configDir });
  await store.upsert('default', local);
  await store.upsert('prod', prod);
  await store.upsert('stage', stage);
  if (current !== undefined) await store.use(current);
  return store;
}

describe('ProfileStore', () => {
  it('stores profiles in <configDir>/config.json, owner-only', async () => {
    const store = await seeded('prod');
    expect(await store.list()).toEqual({ default: local, prod, stage });
    expect(await store.get('prod')).toEqual(prod);
    expect(await store.get('nope')).toBeUndefined();
    expect(await store.current()).toBe('prod');
    const file = path.join(configDir, 'config.json');
    expect(await store.path()).toBe(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(configDir).mode & 0o777).toBe(0o700);
    // a second instance reads the same file
    expect(await new ProfileStore({ configDir }).current()).toBe('prod');
  });

  it('upserts, removes (unselecting the current one) and refuses to use an unknown profile', async () => {
    const store = await seeded('prod');
    await store.upsert('prod', { ...prod, userId: 'u1' });
    expect((await store.get('prod'))?.userId).toBe('u1');
    expect(await store.remove('prod')).toBe(true);
    expect(await store.remove('prod')).toBe(false);
    expect(await store.current()).toBeUndefined();
    await expect(store.use('prod')).rejects.toThrow(/No profile named "prod"/);
  });

  it('keeps profile names with dots intact', async () => {
    const store = new ProfileStore({ configDir });
    await store.upsert('acme.prod', prod);
    expect(Object.keys(await store.list())).toEqual(['acme.prod']);
  });

  it('rejects an invalid profile on write', async () => {
    const store = new ProfileStore({ configDir });
    await expect(store.upsert('x', { baseUrl: 'u', authKind: 'magic' } as unknown as Profile)).rejects.toThrow();
  });

  it('reports a corrupt or invalid file clearly', async () => {
    fs.mkdirSync(configDir, { recursive: true });
    fs.writeFileSync(path.join(configDir, 'config.json'), '{not json');
    await expect(new ProfileStore({ configDir }).list()).rejects.toThrow(/profiles file .* is corrupt/);
    fs.writeFileSync(path.join(configDir, 'config.json'), JSON.stringify({ profiles: { a: { baseUrl: 1 } } }));
    await expect(new ProfileStore({ configDir }).list()).rejects.toThrow(/profiles file .* is corrupt/);
  });

  it('defaults to the XDG config dir', () => {
    const saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = path.join(dir, 'xdg');
    try {
      if (process.platform === 'linux') expect(defaultConfigDir()).toBe(path.join(dir, 'xdg', 'svc'));
      expect(new ProfileStore().configDir).toBe(defaultConfigDir());
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
  });
});

describe('secret account names', () => {
  it('are <profile>:<kind>', () => {
    expect(secretAccounts('prod')).toEqual({
      accessToken: 'prod:accessToken',
      refreshToken: 'prod:refreshToken',
      sessionCookies: 'prod:sessionCookies',
      apiKey: 'prod:apiKey',
    });
    expect(secretAccount('a.b', 'apiKey')).toBe('a.b:apiKey');
  });
});

describe('resolveConnection (CLI.md precedence: flag > environment > selected profile > default profile)', () => {
  it('uses the default profile when nothing is selected', async () => {
    const c = await resolveConnection({ flags: {}, env: {}, store: await seeded() });
    expect(c).toMatchObject({
      profileName: 'default',
      profileSource: 'default',
      baseUrl: local.baseUrl,
      credentials: { kind: 'stored', profileName: 'default' },
      persist: true,
    });
  });

  it('selected profile beats the default one', async () => {
    const c = await resolveConnection({ flags: {}, env: {}, store: await seeded('prod') });
    expect(c).toMatchObject({ profileName: 'prod', profileSource: 'current', baseUrl: prod.baseUrl, profile: prod });
  });

  it('SVC_PROFILE beats the selected profile', async () => {
    const c = await resolveConnection({ flags: {}, env: { SVC_PROFILE: 'stage' }, store: await seeded('prod') });
    expect(c).toMatchObject({ profileName: 'stage', profileSource: 'env', baseUrl: 'https://stage.example.com' });
  });

  it('--profile beats SVC_PROFILE', async () => {
    const c = await resolveConnection({
      flags: { profile: 'prod' },
      env: { SVC_PROFILE: 'stage' },
      store: await seeded('stage'),
    });
    expect(c).toMatchObject({ profileName: 'prod', profileSource: 'flag', baseUrl: prod.baseUrl });
  });

  it('SVC_BASE_URL beats the profile URL, --base-url beats both', async () => {
    const store = await seeded('prod');
    const env = { SVC_BASE_URL: 'https://env.example.com' };
    expect((await resolveConnection({ flags: {}, env, store })).baseUrl).toBe('https://env.example.com');
    expect((await resolveConnection({ flags: { baseUrl: 'https://flag.example.com/' }, env, store })).baseUrl).toBe(
      'https://flag.example.com',
    );
  });

  it('an unknown profile has no credentials and the default base URL', async () => {
    const c = await resolveConnection({ flags: { profile: 'new' }, env: {}, store: await seeded() });
    expect(c).toEqual({
      profileName: 'new',
      profileSource: 'flag',
      baseUrl: DEFAULT_BASE_URL,
      baseUrlFrom: 'default',
      credentials: { kind: 'none' },
      persist: true,
    });
  });

  it('issue 9 item 10: a base URL that is not an http(s) URL is a usage error naming where it came from', async () => {
    const store = await seeded();
    for (const [flags, env, where] of [
      [{ baseUrl: 'not-a-url' }, {}, '--base-url'],
      [{ baseUrl: 'ftp://files.example.com' }, {}, '--base-url'],
      [{}, { SVC_BASE_URL: 'example.com' }, 'SVC_BASE_URL'],
      // As the argv parser passes it: --base-url filled from the variable when argv has none.
      [{ baseUrl: 'example.com' }, { SVC_BASE_URL: 'example.com' }, 'SVC_BASE_URL'],
    ] as const) {
      const error = await resolveConnection({ flags, env, store }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toContain(where);
    }
  });

  it('issue 9 item 7: a base URL given with the API prefix (…/api/v1) is understood as the deployment', async () => {
    const c = await resolveConnection({ flags: { baseUrl: 'https://rmm.example.com/api/v1/' }, env: {}, store: await seeded() });
    expect(c.baseUrl).toBe('https://rmm.example.com');
  });

  it('empty variables count as unset', async () => {
    const c = await resolveConnection({
      flags: {},
      env: { SVC_PROFILE: '', SVC_API_KEY: '', SVC_TOKEN: '' },
      store: await seeded('prod'),
    });
    expect(c).toMatchObject({ profileName: 'prod', persist: true });
  });
});

describe('credentials from the environment never touch the disk', () => {
  const untouched = async (env: Record<string, string>, flags: { profile?: string; baseUrl?: string } = {}) => {
    const store = new ProfileStore({ configDir });
    const c = await resolveConnection({ flags, env, store });
    expect(fs.existsSync(configDir)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]);
    return c;
  };

  it('SVC_API_KEY', async () => {
    expect(await untouched({ SVC_API_KEY: 'sk_live_1', SVC_BASE_URL: 'https://api.example.com' })).toEqual({
      profileName: 'default',
      profileSource: 'default',
      baseUrl: 'https://api.example.com',
      baseUrlFrom: 'env',
      credentials: { kind: 'apiKey', apiKey: 'sk_live_1' },
      persist: false,
    });
  });

  it('SVC_TOKEN, with a profile named by flag', async () => {
    expect(await untouched({ SVC_TOKEN: 'eyJ' }, { profile: 'ci' })).toEqual({
      profileName: 'ci',
      profileSource: 'flag',
      baseUrl: DEFAULT_BASE_URL,
      baseUrlFrom: 'default',
      credentials: { kind: 'token', accessToken: 'eyJ', fromEnv: true },
      persist: false,
    });
  });

  it('SVC_API_KEY wins over SVC_TOKEN, and an existing config file is not read', async () => {
    await seeded('prod');
    const before = fs.readFileSync(path.join(configDir, 'config.json'), 'utf8');
    fs.chmodSync(path.join(configDir, 'config.json'), 0o000);
    try {
      const c = await resolveConnection({
        flags: {},
        env: { SVC_API_KEY: 'k', SVC_TOKEN: 't' },
        store: new ProfileStore({ configDir }),
      });
      expect(c.credentials).toEqual({ kind: 'apiKey', apiKey: 'k' });
      expect(c.profileName).toBe('default');
      expect(c.baseUrl).toBe(DEFAULT_BASE_URL);
    } finally {
      fs.chmodSync(path.join(configDir, 'config.json'), 0o600);
    }
    expect(fs.readFileSync(path.join(configDir, 'config.json'), 'utf8')).toBe(before);
  });
});

describe('prototype keys', () => {
  it('are not profiles', async () => {
    const store = await seeded();
    expect(await store.get('constructor')).toBeUndefined();
    expect(await store.remove('toString')).toBe(false);
  });
});
