import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import envPaths from 'env-paths';
import type Conf from 'conf';
import { API_PREFIX } from '../client/endpoints.js';
import { UsageError } from './prompts.js';

const AUTH_KINDS = ['password', 'apiKey', 'sso'] as const;
const STORAGES = ['keychain', 'file'] as const;

/** Named connections in the config file (CLI.md "Connection and credentials"); secrets live in the SecretStore. */
export interface Profile {
  baseUrl: string;
  email?: string | undefined;
  authKind: (typeof AUTH_KINDS)[number];
  storage?: (typeof STORAGES)[number] | undefined;
  userId?: string | undefined;
}

export interface ProfilesFile {
  currentProfile?: string | undefined;
  profiles: Record<string, Profile>;
}

// The file is checked by hand rather than with zod: it is read by nearly every command, and loading zod would cost
// more than the rest of that command's start. Unknown keys are dropped, as a zod object would.
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function optionalString(value: unknown, where: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new Error(`${where}: expected a string`);
}

function oneOf<T extends string>(values: readonly T[], value: unknown, where: string): T {
  if ((values as readonly unknown[]).includes(value)) return value as T;
  throw new Error(`${where}: expected one of ${values.join(', ')}`);
}

function parseProfile(value: unknown, where: string): Profile {
  if (!isObject(value)) throw new Error(`${where}: expected an object`);
  if (typeof value.baseUrl !== 'string' || value.baseUrl === '') throw new Error(`${where}.baseUrl: expected a URL`);
  const email = optionalString(value.email, `${where}.email`);
  const userId = optionalString(value.userId, `${where}.userId`);
  const storage = value.storage === undefined ? undefined : oneOf(STORAGES, value.storage, `${where}.storage`);
  return {
    baseUrl: value.baseUrl,
    ...(email === undefined ? {} : { email }),
    authKind: oneOf(AUTH_KINDS, value.authKind, `${where}.authKind`),
    ...(storage === undefined ? {} : { storage }),
    ...(userId === undefined ? {} : { userId }),
  };
}

function parseProfilesFile(value: unknown): ProfilesFile {
  if (!isObject(value)) throw new Error('expected an object');
  const currentProfile = optionalString(value.currentProfile, 'currentProfile');
  if (value.profiles !== undefined && !isObject(value.profiles)) throw new Error('profiles: expected an object');
  // fromEntries defines own properties: a profile named __proto__ stays a profile.
  const profiles = Object.fromEntries(
    Object.entries(value.profiles ?? {}).map(([name, profile]) => [name, parseProfile(profile, `profiles.${name}`)]),
  );
  return { ...(currentProfile === undefined ? {} : { currentProfile }), profiles };
}

export const DEFAULT_PROFILE = 'default';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** The XDG config dir (`$XDG_CONFIG_HOME/svc`, `~/.config/svc`, or the platform's equivalent). */
export function defaultConfigDir(): string {
  return envPaths('svc', { suffix: '' }).config;
}

export class ProfileStoreError extends Error {
  override name = 'ProfileStoreError';
}

/**
 * Profiles in `<configDir>/config.json`. Nothing touches the disk until a method is called; reads parse the file
 * directly, and `conf` (slow to import) is loaded only to write it, atomically and owner-only.
 */
export class ProfileStore {
  readonly configDir: string;
  private conf: Conf<ProfilesFile> | undefined;

  constructor(options: { configDir?: string } = {}) {
    this.configDir = options.configDir ?? defaultConfigDir();
  }

  async list(): Promise<Record<string, Profile>> {
    return (await this.read()).profiles;
  }

  async get(name: string): Promise<Profile | undefined> {
    const { profiles } = await this.read();
    return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
  }

  async upsert(name: string, profile: Profile): Promise<void> {
    let parsed: Profile;
    try {
      parsed = parseProfile(profile, name);
    } catch (error) {
      throw new ProfileStoreError(`Invalid profile ${(error as Error).message}`);
    }
    const file = await this.read();
    await this.write({ ...file, profiles: { ...file.profiles, [name]: parsed } });
  }

  /** Returns whether the profile existed; removing the current profile unselects it. */
  async remove(name: string): Promise<boolean> {
    const file = await this.read();
    if (!Object.hasOwn(file.profiles, name)) return false;
    const profiles = { ...file.profiles };
    delete profiles[name];
    const currentProfile = file.currentProfile === name ? undefined : file.currentProfile;
    await this.write({ profiles, ...(currentProfile === undefined ? {} : { currentProfile }) });
    return true;
  }

  async current(): Promise<string | undefined> {
    return (await this.read()).currentProfile;
  }

  async use(name: string): Promise<void> {
    const file = await this.read();
    if (!Object.hasOwn(file.profiles, name)) throw new ProfileStoreError(`No profile named "${name}"`);
    await this.write({ ...file, currentProfile: name });
  }

  /** Where the config file is (or will be). */
  async path(): Promise<string> {
    return (await this.open()).path;
  }

  private async open(): Promise<Conf<ProfilesFile>> {
    if (this.conf) return this.conf;
    const { default: ConfClass } = await import('conf');
    // conf creates the directory with default permissions; create it owner-only first.
    mkdirSync(this.configDir, { recursive: true, mode: 0o700 });
    try {
      this.conf = new ConfClass<ProfilesFile>({
        projectName: 'svc',
        cwd: this.configDir,
        configFileMode: 0o600,
        accessPropertiesByDotNotation: false,
      });
    } catch (error) {
      throw this.corrupt(error);
    }
    return this.conf;
  }

  /** Reads the file itself: conf is needed only to write it, and loading conf costs more than a command's start. */
  private async read(): Promise<ProfilesFile> {
    let text: string;
    try {
      text = await readFile(path.join(this.configDir, 'config.json'), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
      throw this.corrupt(error);
    }
    try {
      return parseProfilesFile(JSON.parse(text));
    } catch (error) {
      throw this.corrupt(error);
    }
  }

  private async write(file: ProfilesFile): Promise<void> {
    (await this.open()).store = file;
  }

  private corrupt(cause: unknown): ProfileStoreError {
    const detail = cause instanceof Error ? `: ${cause.message.split('\n')[0] ?? ''}` : '';
    return new ProfileStoreError(
      `The profiles file in ${this.configDir} (config.json) is corrupt${detail}. Fix or remove it, then run \`svc login\` again`,
      { cause },
    );
  }
}

/** Secret store account names for a profile's secrets. */
export const secretAccounts = (profile: string) =>
  ({
    accessToken: `${profile}:accessToken`,
    refreshToken: `${profile}:refreshToken`,
    sessionCookies: `${profile}:sessionCookies`,
    apiKey: `${profile}:apiKey`,
  }) as const;

export type SecretKind = keyof ReturnType<typeof secretAccounts>;

export function secretAccount(profile: string, kind: SecretKind): string {
  return secretAccounts(profile)[kind];
}

export type Credentials =
  | { kind: 'apiKey'; apiKey: string }
  | { kind: 'token'; accessToken: string; fromEnv: true }
  | { kind: 'stored'; profileName: string }
  | { kind: 'none' };

export interface Connection {
  profileName: string;
  /** Where the profile name came from. */
  profileSource: 'flag' | 'env' | 'current' | 'default';
  /** The stored profile, when one was read (never with SVC_API_KEY/SVC_TOKEN). */
  profile?: Profile;
  baseUrl: string;
  /** Where the base URL came from: a fresh user with neither a profile nor one given is not logged in. */
  baseUrlFrom: 'flag' | 'env' | 'profile' | 'default';
  credentials: Credentials;
  /** False when the credentials come from the environment: then nothing is read from or written to disk. */
  persist: boolean;
}

export interface ResolveConnectionInput {
  flags: { profile?: string; baseUrl?: string };
  env?: Record<string, string | undefined>;
  store: ProfileStore;
}

/** An empty variable counts as unset, as shells make `VAR= svc …` the way to clear one. */
function fromEnv(env: Record<string, string | undefined>, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

/**
 * CLI.md precedence: flag > environment > selected profile > the `default` profile. SVC_API_KEY wins over
 * SVC_TOKEN when both are set; with either, the profile store is not opened at all.
 */
export async function resolveConnection(input: ResolveConnectionInput): Promise<Connection> {
  const { flags, store } = input;
  const env = input.env ?? process.env;
  const envProfile = fromEnv(env, 'SVC_PROFILE');
  const envBaseUrl = fromEnv(env, 'SVC_BASE_URL');
  // The parser fills --profile and --base-url from these variables when argv has neither (as oclif does): a value
  // equal to its variable's is taken as the variable's, so that an error names where it really came from.
  const flagProfile = unlessFrom(nonEmpty(flags.profile), envProfile);
  const flagBaseUrl = unlessFrom(nonEmpty(flags.baseUrl), envBaseUrl);
  const apiKey = fromEnv(env, 'SVC_API_KEY');
  const token = fromEnv(env, 'SVC_TOKEN');

  const envCredentials: Credentials | undefined =
    apiKey !== undefined
      ? { kind: 'apiKey', apiKey }
      : token !== undefined
        ? { kind: 'token', accessToken: token, fromEnv: true }
        : undefined;

  let profileName: string;
  let profileSource: Connection['profileSource'];
  if (flagProfile !== undefined) [profileName, profileSource] = [flagProfile, 'flag'];
  else if (envProfile !== undefined) [profileName, profileSource] = [envProfile, 'env'];
  else {
    const current = envCredentials === undefined ? await store.current() : undefined;
    [profileName, profileSource] = current === undefined ? [DEFAULT_PROFILE, 'default'] : [current, 'current'];
  }

  if (envCredentials !== undefined) {
    return { profileName, profileSource, ...baseUrlOf(flagBaseUrl, envBaseUrl, undefined), credentials: envCredentials, persist: false };
  }

  const profile = await store.get(profileName);
  return {
    profileName,
    profileSource,
    ...(profile === undefined ? {} : { profile }),
    ...baseUrlOf(flagBaseUrl, envBaseUrl, profile === undefined ? undefined : { name: profileName, url: profile.baseUrl }),
    credentials: profile === undefined ? { kind: 'none' } : { kind: 'stored', profileName },
    persist: true,
  };
}

const unlessFrom = (flag: string | undefined, variable: string | undefined) => (flag === variable ? undefined : flag);

/** The base URL by precedence, checked and normalised; a bad one is a usage error naming where it came from. */
function baseUrlOf(
  flag: string | undefined,
  env: string | undefined,
  profile: { name: string; url: string } | undefined,
): Pick<Connection, 'baseUrl' | 'baseUrlFrom'> {
  const [given, from, where]: [string, Connection['baseUrlFrom'], string] =
    flag !== undefined
      ? [flag, 'flag', '--base-url']
      : env !== undefined
        ? [env, 'env', 'SVC_BASE_URL']
        : profile !== undefined
          ? [profile.url, 'profile', `the base URL of profile "${profile.name}"`]
          : [DEFAULT_BASE_URL, 'default', 'the default base URL'];
  return { baseUrl: normaliseBaseUrl(given, where), baseUrlFrom: from };
}

/**
 * An http(s) URL without trailing slashes; the API's own prefix (`…/api/v1`, what the API documentation shows)
 * is understood as the deployment it belongs to, since every path the client sends starts with it.
 */
export function normaliseBaseUrl(given: string, where: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`${where} is not a URL: "${given}" (expected e.g. https://rmm.example.com)`, where);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${where} must be an http or https URL, got "${given}"`, where);
  return given.trim().replace(/\/+$/, '').replace(new RegExp(`${API_PREFIX}$`), '').replace(/\/+$/, '');
}
