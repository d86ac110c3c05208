import { call } from '../client/contract-client.js';
import { auth } from '../client/endpoints.js';
import { HttpClient, type AuthProvider, type HttpClientOptions, type RetryInfo } from '../client/http.js';
import { CommandError } from './base-command.js';
import { ExitCode } from './exit-codes.js';
import { ProfileStore, resolveConnection, secretAccount, type Connection } from './profiles.js';
import { openSecretStore, type SecretStorage, type SecretStore } from './secret-store.js';
import { warnOnce } from './terminal.js';

export interface SessionOptions {
  profile?: string | undefined;
  baseUrl?: string | undefined;
  retries?: number | undefined;
  /** The limit of each try of a request, in seconds (`--timeout`). */
  timeoutSeconds?: number | undefined;
  /** Told before each retry; the command decides whether to show it. */
  onRetry?: ((info: RetryInfo) => void) | undefined;
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

  /** What every client of this session shares: where, how long, how often, and who hears of retries. */
  private clientOptions(): HttpClientOptions {
    const { retries, timeoutSeconds, onRetry } = this.options;
    return {
      baseUrl: this.connection.baseUrl,
      userAgent: `svc-cli (node ${process.version})`,
      ...(retries !== undefined ? { retries } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
      ...(onRetry !== undefined ? { onRetry } : {}),
    };
  }

  /**
   * The client that sends the profile's credentials. A user with no profile who gave no base URL has never
   * logged in: that is said at once, rather than a refused connection to the default address.
   */
  http(): HttpClient {
    const c = this.connection;
    if (c.credentials.kind === 'none' && c.baseUrlFrom === 'default') {
      const profile = c.profileSource === 'flag' || c.profileSource === 'env' ? ` --profile ${c.profileName}` : '';
      throw new CommandError(
        `Not logged in: there is no profile "${c.profileName}"`,
        ExitCode.AUTH,
        'NOT_LOGGED_IN',
        `Try this: svc login${profile} --base-url URL (or set SVC_API_KEY or SVC_TOKEN, with SVC_BASE_URL)`,
      );
    }
    return (this.httpClient ??= new HttpClient({ ...this.clientOptions(), auth: this.authProvider() }));
  }

  /** A client without credentials (sign-in, token refresh, registration). */
  anonymousHttp(): HttpClient {
    return new HttpClient(this.clientOptions());
  }
}
