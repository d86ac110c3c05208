import { call } from '../client/contract-client.js';
import { auth } from '../client/endpoints.js';
import { HttpClient, type AuthProvider } from '../client/http.js';
import { ProfileStore, resolveConnection, secretAccount, type Connection } from './profiles.js';
import { openSecretStore, type SecretStorage, type SecretStore } from './secret-store.js';
import { warnOnce } from './terminal.js';

export interface SessionOptions {
  profile?: string | undefined;
  baseUrl?: string | undefined;
  retries?: number | undefined;
  /** Force where secrets are kept (`svc login --storage`). */
  storage?: SecretStorage | undefined;
  env?: Record<string, string | undefined>;
}

export interface StoredTokens {
  accessToken: string;
  refreshToken?: string | undefined;
}

/**
 * Everything a command needs to talk to a deployment: the resolved connection (CLI.md precedence), the
 * secret store, and an HTTP client whose auth refreshes expired access tokens transparently.
 */
export class CliSession {
  private secretsPromise: Promise<SecretStore> | undefined;
  private httpClient: HttpClient | undefined;

  private constructor(
    readonly connection: Connection,
    readonly profiles: ProfileStore,
    private readonly options: SessionOptions,
  ) {}

  static async open(options: SessionOptions = {}): Promise<CliSession> {
    const profiles = new ProfileStore();
    const connection = await resolveConnection({
      flags: { ...(options.profile ? { profile: options.profile } : {}), ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}) },
      env: options.env ?? process.env,
      store: profiles,
    });
    return new CliSession(connection, profiles, options);
  }

  get profileName(): string {
    return this.connection.profileName;
  }

  /** The secret store, opened on first use; never opened when credentials come from the environment. */
  secrets(): Promise<SecretStore> {
    const preferred = this.options.storage ?? this.connection.profile?.storage ?? 'auto';
    return (this.secretsPromise ??= openSecretStore({
      configDir: this.profiles.configDir,
      prefer: preferred,
      onFallback: (message) => warnOnce('secret-store-fallback', message),
    }));
  }

  async storedTokens(): Promise<StoredTokens | undefined> {
    if (this.connection.credentials.kind !== 'stored') return undefined;
    const store = await this.secrets();
    const accessToken = await store.get(secretAccount(this.profileName, 'accessToken'));
    if (!accessToken) return undefined;
    const refreshToken = await store.get(secretAccount(this.profileName, 'refreshToken'));
    return { accessToken, refreshToken };
  }

  async saveTokens(tokens: StoredTokens): Promise<void> {
    const store = await this.secrets();
    await store.set(secretAccount(this.profileName, 'accessToken'), tokens.accessToken);
    if (tokens.refreshToken) await store.set(secretAccount(this.profileName, 'refreshToken'), tokens.refreshToken);
  }

  async storedApiKey(): Promise<string | undefined> {
    if (this.connection.credentials.kind !== 'stored') return undefined;
    return (await this.secrets()).get(secretAccount(this.profileName, 'apiKey'));
  }

  async forgetSecrets(): Promise<void> {
    const store = await this.secrets();
    for (const kind of ['accessToken', 'refreshToken', 'apiKey'] as const) await store.delete(secretAccount(this.profileName, kind));
  }

  private authProvider(): AuthProvider {
    const credentials = this.connection.credentials;
    return {
      headers: async (): Promise<Record<string, string>> => {
        if (credentials.kind === 'apiKey') return { 'x-api-key': credentials.apiKey };
        if (credentials.kind === 'token') return { authorization: `Bearer ${credentials.accessToken}` };
        if (credentials.kind === 'stored') {
          const apiKey = this.connection.profile?.authKind === 'apiKey' ? await this.storedApiKey() : undefined;
          if (apiKey) return { 'x-api-key': apiKey };
          const tokens = await this.storedTokens();
          if (tokens) return { authorization: `Bearer ${tokens.accessToken}` };
        }
        return {};
      },
      refresh: async () => {
        const tokens = await this.storedTokens();
        if (!tokens?.refreshToken) return false;
        try {
          const refreshed = await call(this.anonymousHttp(), auth.refresh, { body: { refreshToken: tokens.refreshToken } });
          await this.saveTokens(refreshed.tokens);
          return true;
        } catch {
          return false;
        }
      },
    };
  }

  http(): HttpClient {
    return (this.httpClient ??= new HttpClient({
      baseUrl: this.connection.baseUrl,
      auth: this.authProvider(),
      ...(this.options.retries !== undefined ? { retries: this.options.retries } : {}),
      userAgent: `svc-cli (node ${process.version})`,
    }));
  }

  /** A client without credentials (sign-in, token refresh, registration). */
  anonymousHttp(): HttpClient {
    return new HttpClient({ baseUrl: this.connection.baseUrl, ...(this.options.retries !== undefined ? { retries: this.options.retries } : {}) });
  }
}
