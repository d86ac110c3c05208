import { mkdirSync } from 'node:fs';
import envPaths from 'env-paths';
import { z } from 'zod';
import type Conf from 'conf';

/** Named connections in the config file (CLI.md "Connection and credentials"); secrets live in the SecretStore. */
export const ProfileSchema = z.object({
  baseUrl: z.string().min(1),
  email: z.string().optional(),
  authKind: z.enum(['password', 'apiKey', 'sso']),
  storage: z.enum(['keychain', 'file']).optional(),
  userId: z.string().optional(),
});
export type Profile = z.infer<typeof ProfileSchema>;

export const ProfilesFileSchema = z.object({
  currentProfile: z.string().optional(),
  profiles: z.record(z.string(), ProfileSchema).default({}),
});
export type ProfilesFile = z.infer<typeof ProfilesFileSchema>;

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
 * Profiles in `<configDir>/config.json`. Nothing touches the disk until a method is called, and `conf`
 * (which is slow to import) is loaded on first use.
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
    const parsed = ProfileSchema.parse(profile);
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

  private async read(): Promise<ProfilesFile> {
    const conf = await this.open();
    let raw: unknown;
    try {
      raw = conf.store;
    } catch (error) {
      throw this.corrupt(error);
    }
    const result = ProfilesFileSchema.safeParse(raw);
    if (!result.success) throw this.corrupt(result.error);
    return result.data;
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
  const flagProfile = nonEmpty(flags.profile);
  const envProfile = fromEnv(env, 'SVC_PROFILE');
  const explicitBaseUrl = nonEmpty(flags.baseUrl) ?? fromEnv(env, 'SVC_BASE_URL');
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
    return {
      profileName,
      profileSource,
      baseUrl: trimSlash(explicitBaseUrl ?? DEFAULT_BASE_URL),
      credentials: envCredentials,
      persist: false,
    };
  }

  const profile = await store.get(profileName);
  return {
    profileName,
    profileSource,
    ...(profile === undefined ? {} : { profile }),
    baseUrl: trimSlash(explicitBaseUrl ?? profile?.baseUrl ?? DEFAULT_BASE_URL),
    credentials: profile === undefined ? { kind: 'none' } : { kind: 'stored', profileName },
    persist: true,
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
