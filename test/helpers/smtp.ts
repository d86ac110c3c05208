import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Inbox {
  /** `smtp://127.0.0.1:<port>`, for SVC_SMTP_URL. */
  url: string;
  /** Every message accepted so far, raw (headers and MIME body). */
  messages: string[];
  /** The next message not yet returned by `next` (one already waiting, or the next to arrive). */
  next(timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/** A real SMTP server on a loopback port (the smtp-server package) that keeps every message it accepts. */
export async function startSmtp(): Promise<Inbox> {
  const messages: string[] = [];
  let read = 0;
  const waiting: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push(Buffer.concat(chunks).toString('utf8'));
        for (const wake of waiting.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    // A timer, not Date: tests fake Date to move tokens' expiry.
    next(timeoutMs = 5000) {
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(take), 1);
          reject(new Error('no e-mail arrived'));
        }, timeoutMs);
        const take = () => {
          if (messages.length <= read) return void waiting.push(take);
          clearTimeout(timer);
          resolve(messages[read++] ?? '');
        };
        take();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The text of a MIME message with quoted-printable soft breaks and escapes undone. */
export function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The link to `page` (e.g. "accept-invite", "reset-password") that a message carries. */
export function linkIn(message: string, page: string): string {
  const match = new RegExp(`https?://\\S+/${page}\\?token=[A-Za-z0-9_%-]+`).exec(decodeQuotedPrintable(message));
  if (!match) throw new Error(`no ${page} link in the message`);
  return match[0];
}

/** The token a link carries. */
export function tokenOf(link: string): string {
  const token = new URL(link).searchParams.get('token');
  if (!token) throw new Error('link without a token');
  return token;
}
