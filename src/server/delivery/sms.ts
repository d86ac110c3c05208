import type { ServerConfig } from '../config.js';
import { DomainError } from '../errors.js';
import type { DeliveryLog } from './mailer.js';

/** Without `SVC_SMS_URL` every SMS sender answers 503 with this message (docs/api-notes.md). */
export const SMS_NOT_CONFIGURED = 'SMS service not configured';

/**
 * Text messages through an HTTP gateway (01 §4.5, §5.7): `POST <SVC_SMS_URL>` with the JSON body
 * `{to, body}` and, when `SVC_SMS_TOKEN` is set, `Authorization: Bearer <token>`. Any 2xx answer is a
 * success. The message body (it carries a code) is never logged.
 */
export class SmsSender {
  constructor(
    private readonly settings: ServerConfig['sms'],
    private readonly log: DeliveryLog,
  ) {}

  get configured(): boolean {
    return this.settings.url !== undefined;
  }

  /** Throws 503 SMS_NOT_CONFIGURED without a gateway and 502 SMS_DELIVERY_FAILED when the gateway fails. */
  assertConfigured(): string {
    if (this.settings.url === undefined) throw new DomainError('unavailable', SMS_NOT_CONFIGURED, 'SMS_NOT_CONFIGURED');
    return this.settings.url;
  }

  async send(to: string, body: string): Promise<void> {
    const url = this.assertConfigured();
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.settings.token) headers.authorization = `Bearer ${this.settings.token}`;
    let failure: string | null = null;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ to, body }),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
        redirect: 'error',
      });
      // The answer is not needed; reading it frees the connection.
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) failure = `gateway answered ${res.status}`;
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
    if (failure !== null) {
      this.log.warn({ error: failure, toSuffix: to.slice(-2) }, 'SMS delivery failed');
      throw new DomainError('upstream_failed', 'SMS delivery failed', 'SMS_DELIVERY_FAILED');
    }
  }
}
