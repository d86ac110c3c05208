import { call } from '../client/contract-client.js';
import { parseStoredCookies, refreshHeaders, sessionCookiesFrom, type SessionCookies } from '../client/cookies.js';
import { auth } from '../client/endpoints.js';
import type { ResponseHeaders } from '../client/errors.js';
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
  /** The refresh cookies of a deployment that sends no refresh token in the body (issue 15 item 1). */
  cookies?: SessionCookies | undefined;
}

/**
 * Everything a command needs to talk to a deployment: the resolved connection (CLI.md precedence), the
 * secret store, and an HTTP client whose auth refreshes expired access tokens transparently.
 */
export class CliSession {
  private secretsPromise: Promise<SecretStore> | undefined;
  private httpClient: HttpClient | undefined;
  /** The session cookies the answers of this process set (`null`: cleared), saved with the next tokens. */
  private cookies: SessionCookies | null | undefined;

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

  /** Requests of `http()` carry an API key (from SVC_API_KEY or a profile signed in with one). */
  get usesApiKey(): boolean {
    const { credentials, profile } = this.connection;
    return credentials.kind === 'apiKey' || (credentials.kind === 'stored' && profile?.authKind === 'apiKey');
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

  /** Where the credentials in use are kept, for a person (`whoami`, `profiles show`); `none` says what stands
   * when there are none. */
  async credentialsSource(none: string): Promise<string> {
    const { kind } = this.connection.credentials;
    if (kind === 'apiKey') return 'environment (SVC_API_KEY)';
    if (kind === 'token') return 'environment (SVC_TOKEN)';
    if (kind === 'none') return none;
    const store = await this.secrets();
    return store.kind === 'file' ? `file ${store.location}` : 'OS keychain';
  }

  async storedTokens(): Promise<StoredTokens | undefined> {
    if (this.connection.credentials.kind !== 'stored') return undefined;
    const store = await this.secrets();
    const accessToken = await store.get(secretAccount(this.profileName, 'accessToken'));
    if (!accessToken) return undefined;
    const refreshToken = await store.get(secretAccount(this.profileName, 'refreshToken'));
    const cookies = parseStoredCookies(await store.get(secretAccount(this.profileName, 'sessionCookies')));
    return { accessToken, refreshToken, cookies };
  }

  /** The session cookies the answers seen so far set (to hand to the session that saves them). */
  get capturedCookies(): SessionCookies | null | undefined {
    return this.cookies;
  }

  /** Saves a token pair, and the session cookies that came with it (by default those this session's answers
   * set). A pair without a refresh token (a hosted deployment's) keeps only the cookies. */
  async saveTokens(tokens: Omit<StoredTokens, 'cookies'>, cookies: SessionCookies | null | undefined = this.cookies): Promise<void> {
    const store = await this.secrets();
    await store.set(secretAccount(this.profileName, 'accessToken'), tokens.accessToken);
    if (tokens.refreshToken) await store.set(secretAccount(this.profileName, 'refreshToken'), tokens.refreshToken);
    if (cookies) await store.set(secretAccount(this.profileName, 'sessionCookies'), JSON.stringify(cookies));
    else if (cookies === null) await store.delete(secretAccount(this.profileName, 'sessionCookies'));
  }

  async storedApiKey(): Promise<string | undefined> {
    if (this.connection.credentials.kind !== 'stored') return undefined;
    return (await this.secrets()).get(secretAccount(this.profileName, 'apiKey'));
  }

  async forgetSecrets(): Promise<void> {
    const store = await this.secrets();
    for (const kind of ['accessToken', 'refreshToken', 'sessionCookies', 'apiKey'] as const) await store.delete(secretAccount(this.profileName, kind));
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
        // The refresh token of the body where the server gave one (the bundled server), else the cookies (a
        // hosted deployment refuses a refresh token in the body): both cookies and the CSRF header.
        const request = tokens?.refreshToken
          ? { body: { refreshToken: tokens.refreshToken } }
          : tokens?.cookies
            ? { body: {}, headers: refreshHeaders(tokens.cookies) }
            : undefined;
        if (!request) return false;
        try {
          const refreshed = await call(this.anonymousHttp(), auth.refresh, request);
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
      onResponse: (headers) => this.capture(headers),
    };
  }

  /** Keeps the session cookies an answer sets (sign-in, MFA, refresh), for `saveTokens`. */
  private async capture(headers: ResponseHeaders): Promise<void> {
    const found = await sessionCookiesFrom(headers, this.cookies ?? undefined);
    if (found !== undefined) this.cookies = found;
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
