import type { Transporter } from 'nodemailer';
import type { ServerConfig } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Where delivery failures are reported: the app's logger. Messages never carry a link or a code. */
export interface DeliveryLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/** The outcome of one attempt, so a caller can tell the user whether the mail went out. */
export type MailOutcome = 'sent' | 'not_configured' | 'failed';

/**
 * Outgoing e-mail through nodemailer to the SMTP server of `SVC_SMTP_URL`. Sending waits for the server to
 * accept the message, within the configured timeout; a failure is logged (recipient domain and error, never
 * the message body, which carries single-use links) and reported as 'failed'.
 */
export class Mailer {
  private transporter: Transporter | undefined;

  constructor(
    private readonly settings: ServerConfig['mail'],
    private readonly log: DeliveryLog,
  ) {}

  get configured(): boolean {
    return this.settings.smtpUrl !== undefined;
  }

  /** nodemailer is loaded with the first message: most servers never send one. */
  private async transport(url: string): Promise<Transporter> {
    const { default: nodemailer } = await import('nodemailer');
    this.transporter ??= nodemailer.createTransport({
      url,
      connectionTimeout: this.settings.timeoutMs,
      greetingTimeout: this.settings.timeoutMs,
      socketTimeout: this.settings.timeoutMs,
    });
    return this.transporter;
  }

  async send(message: MailMessage): Promise<MailOutcome> {
    const url = this.settings.smtpUrl;
    if (url === undefined) return 'not_configured';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from the SMTP server within ${this.settings.timeoutMs} ms`)), this.settings.timeoutMs);
    });
    try {
      await Promise.race([
        (await this.transport(url)).sendMail({ from: this.settings.from, to: message.to, subject: message.subject, text: message.text }),
        timeout,
      ]);
      return 'sent';
    } catch (err) {
      this.log.warn(
        {
          recipientDomain: message.to.split('@')[1] ?? null,
          subject: message.subject,
          error: err instanceof Error ? err.message : String(err),
        },
        'e-mail delivery failed',
      );
      return 'failed';
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.transporter?.close();
    this.transporter = undefined;
  }
}
