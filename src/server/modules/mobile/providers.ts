import fs from 'node:fs';
import http2 from 'node:http2';
import { SignJWT, importPKCS8 } from 'jose';
import { z } from 'zod';
import type { MobilePushConfig } from '../../config.js';
import type { OutboundClient } from '../../delivery/outbound.js';

/** One push as a provider is asked to deliver it. */
export interface PushMessage {
  token: string;
  title: string;
  body: string;
  /** String values only (FCM data messages carry strings). */
  data: Record<string, string>;
}

/**
 * A failed send says what may follow: `retry` (a 5xx, a 429, a network error or timeout: the same push may succeed
 * later, not before `retryAfterMs` when the provider said so) or not; `tokenGone` (FCM UNREGISTERED, APNs 410
 * Unregistered or BadDeviceToken: the phone's token is dead, no push to it will ever succeed).
 */
export type SendFailure = { ok: false; error: string; retry: boolean; retryAfterMs?: number; tokenGone?: boolean };
export type SendResult = { ok: true; messageId: string | null } | SendFailure;

/** The longest Retry-After honoured (a longer one waits this long). */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** A Retry-After header (RFC 9110: delay-seconds or an HTTP date) in ms from `now`, if there is a usable one. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const ms = /^\d+$/.test(text.trim()) ? Number(text.trim()) * 1000 : Date.parse(text) - now;
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : undefined;
}

/** Rate limited or a server-side failure: worth sending again later. */
const retryableStatus = (status: number) => status === 429 || status >= 500;

export interface PushProvider {
  send(message: PushMessage): Promise<SendResult>;
}

const TIMEOUT_MS = 10_000;
/** 02 §8 "Mobile push channels (client): alerts and default": alert pushes go to the alerts channel. */
const ANDROID_CHANNEL = 'alerts';

const ServiceAccountSchema = z.object({
  client_email: z.string().min(1),
  private_key: z.string().min(1),
  token_uri: z.url().optional(),
});
const TokenAnswerSchema = z.object({ access_token: z.string().min(1), expires_in: z.number().optional() });

function readFile(path: string, what: string): string {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`${what} cannot be read (${path}): ${(err as Error).message}`, { cause: err });
  }
}

/** The FCM v1 error code of an error answer (`error.details[].errorCode`, e.g. UNREGISTERED), if any. */
function fcmErrorCode(body: string): string | undefined {
  try {
    const details = (JSON.parse(body) as { error?: { details?: unknown } }).error?.details;
    const code = Array.isArray(details) ? details.map((d) => (d as { errorCode?: unknown }).errorCode).find((c) => typeof c === 'string') : undefined;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** An FCM error answer: UNREGISTERED (HTTP 404) means the registration token is dead; 429 and 5xx are retried. */
function fcmFailure(status: number, body: string, retryAfter: string | string[] | undefined): SendFailure {
  const code = fcmErrorCode(body);
  const error = `FCM answered HTTP ${status}${code ? `: ${code}` : ''}`;
  if (code === 'UNREGISTERED' || status === 404) return { ok: false, error, retry: false, tokenGone: true };
  if (!retryableStatus(status)) return { ok: false, error, retry: false };
  const after = retryAfterMs(retryAfter);
  return { ok: false, error, retry: true, ...(after !== undefined ? { retryAfterMs: after } : {}) };
}

/** APNs reasons that mean the device token is dead (410 Unregistered; 400 BadDeviceToken). */
const APNS_TOKEN_GONE = new Set(['Unregistered', 'BadDeviceToken']);

/**
 * Firebase Cloud Messaging HTTP v1: a service-account key signs an OAuth2 JWT-bearer assertion (RFC 7523),
 * exchanged for an access token (cached until a minute before it expires), then
 * `POST {apiUrl}/v1/projects/{projectId}/messages:send`. Every request goes through the outbound guard.
 */
export class FcmProvider implements PushProvider {
  private readonly account: z.infer<typeof ServiceAccountSchema>;
  private readonly tokenUrl: string;
  private cached: { token: string; until: number } | undefined;
  /** The exchange under way: concurrent sends share it rather than each exchanging a token. */
  private exchanging: Promise<string> | undefined;

  constructor(
    private readonly config: NonNullable<MobilePushConfig['fcm']>,
    private readonly outbound: OutboundClient,
  ) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFile(config.serviceAccountFile, 'SVC_FCM_SERVICE_ACCOUNT_FILE'));
    } catch (err) {
      throw new Error(`SVC_FCM_SERVICE_ACCOUNT_FILE is not a service-account key: ${(err as Error).message}`, { cause: err });
    }
    const account = ServiceAccountSchema.safeParse(parsed);
    if (!account.success) throw new Error('SVC_FCM_SERVICE_ACCOUNT_FILE is not a service-account key (client_email, private_key)');
    this.account = account.data;
    this.tokenUrl = config.tokenUrl ?? account.data.token_uri ?? 'https://oauth2.googleapis.com/token';
  }

  private async accessToken(): Promise<string> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.token;
    this.exchanging ??= this.exchange().finally(() => {
      this.exchanging = undefined;
    });
    return this.exchanging;
  }

  private async exchange(): Promise<string> {
    const key = await importPKCS8(this.account.private_key, 'RS256');
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({ scope: 'https://www.googleapis.com/auth/firebase.messaging' })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuer(this.account.client_email)
      .setAudience(this.tokenUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key);
    const res = await this.outbound.request(this.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      timeoutMs: TIMEOUT_MS,
    });
    if (res.status !== 200) throw new Error(`FCM token exchange failed: HTTP ${res.status}`);
    const answer = TokenAnswerSchema.safeParse(JSON.parse(res.body));
    if (!answer.success) throw new Error('FCM token exchange answered without an access_token');
    this.cached = { token: answer.data.access_token, until: Date.now() + Math.max(0, (answer.data.expires_in ?? 3600) - 60) * 1000 };
    return answer.data.access_token;
  }

  async send(message: PushMessage): Promise<SendResult> {
    try {
      const token = await this.accessToken();
      const url = `${this.config.apiUrl}/v1/projects/${encodeURIComponent(this.config.projectId)}/messages:send`;
      const res = await this.outbound.request(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          message: {
            token: message.token,
            notification: { title: message.title, body: message.body },
            data: message.data,
            android: { priority: 'high', notification: { channel_id: ANDROID_CHANNEL } },
          },
        }),
        timeoutMs: TIMEOUT_MS,
      });
      if (res.status < 200 || res.status >= 300) return fcmFailure(res.status, res.body, res.headers['retry-after']);
      const name = (JSON.parse(res.body) as { name?: unknown }).name;
      return { ok: true, messageId: typeof name === 'string' ? name : null };
    } catch (err) {
      // The token exchange or the request did not complete (network, timeout, provider down): retried.
      return { ok: false, error: (err as Error).message, retry: true };
    }
  }
}

/**
 * Apple Push Notification service: HTTP/2 (`node:http2`) with an ES256 provider token (kid = key id, iss = team
 * id), renewed every 50 minutes (Apple refuses tokens older than an hour). The URL is checked by the outbound
 * guard before each connection.
 */
export class ApnsProvider implements PushProvider {
  private readonly privateKey: string;
  private cached: { token: string; until: number } | undefined;

  constructor(
    private readonly config: NonNullable<MobilePushConfig['apns']>,
    private readonly outbound: OutboundClient,
  ) {
    this.privateKey = readFile(config.keyFile, 'SVC_APNS_KEY_FILE');
  }

  private async providerToken(): Promise<string> {
    if (this.cached && this.cached.until > Date.now()) return this.cached.token;
    const key = await importPKCS8(this.privateKey, 'ES256');
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.config.keyId })
      .setIssuer(this.config.teamId)
      .setIssuedAt()
      .sign(key);
    this.cached = { token, until: Date.now() + 50 * 60_000 };
    return token;
  }

  async send(message: PushMessage): Promise<SendResult> {
    try {
      const url = await this.outbound.checkUrl(this.config.url);
      const token = await this.providerToken();
      const payload = JSON.stringify({ aps: { alert: { title: message.title, body: message.body }, sound: 'default' }, ...message.data });
      return await new Promise<SendResult>((resolve) => {
        const session = http2.connect(url.origin);
        const done = (result: SendResult) => {
          clearTimeout(timer);
          session.close();
          resolve(result);
        };
        const timer = setTimeout(() => {
          session.destroy();
          resolve({ ok: false, error: `APNs did not answer within ${TIMEOUT_MS} ms`, retry: true });
        }, TIMEOUT_MS);
        session.on('error', (err: Error) => done({ ok: false, error: err.message, retry: true }));
        const req = session.request({
          ':method': 'POST',
          ':path': `/3/device/${encodeURIComponent(message.token)}`,
          authorization: `bearer ${token}`,
          'apns-topic': this.config.topic,
          'apns-push-type': 'alert',
          'apns-priority': '10',
          'content-type': 'application/json',
        });
        let status = 0;
        let apnsId: string | null = null;
        let retryAfter: string | string[] | undefined;
        const chunks: Buffer[] = [];
        req.on('response', (headers) => {
          status = Number(headers[':status'] ?? 0);
          const id = headers['apns-id'];
          apnsId = typeof id === 'string' ? id : null;
          retryAfter = headers['retry-after'];
        });
        req.on('data', (c: Buffer) => {
          if (chunks.reduce((n, b) => n + b.length, 0) < 4096) chunks.push(c);
        });
        req.on('end', () => {
          if (status === 200) return done({ ok: true, messageId: apnsId });
          let reason = '';
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { reason?: unknown };
            reason = typeof parsed.reason === 'string' ? parsed.reason : '';
          } catch {
            // no JSON body
          }
          const error = `APNs answered HTTP ${status}${reason ? `: ${reason}` : ''}`;
          if (status === 410 || APNS_TOKEN_GONE.has(reason)) return done({ ok: false, error, retry: false, tokenGone: true });
          const after = retryableStatus(status) ? retryAfterMs(retryAfter) : undefined;
          done({ ok: false, error, retry: retryableStatus(status), ...(after !== undefined ? { retryAfterMs: after } : {}) });
        });
        req.on('error', (err: Error) => done({ ok: false, error: err.message, retry: true }));
        req.end(payload);
      });
    } catch (err) {
      // The outbound guard refused the URL or the provider token could not be signed: a setting, not retried.
      return { ok: false, error: (err as Error).message, retry: false };
    }
  }
}
