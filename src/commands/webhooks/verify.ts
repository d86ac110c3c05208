import { BaseCommand } from '../../cli/base-command.js';
import { readFlagFile } from '../../cli/files.js';
import { Flags } from '../../cli/flags.js';
import { UsageError } from '../../cli/prompts.js';
import { secretFlags, secretFrom } from '../../cli/webhook-flags.js';
import { verifySignature } from '../../lib/webhook-signature.js';

/** For receivers (02 §5): checks a delivery's signature locally, without a server. */
export default class WebhooksVerify extends BaseCommand<typeof WebhooksVerify> {
  static override summary = "Check a received delivery's signature: exit 0 when valid and fresh, else 1 with the reason";
  static override description = `Recomputes HMAC-SHA256 over "<timestamp>.<raw body>" with the secret (from --secret-stdin or --secret-file, never argv) and compares it in constant time with every sha256= value of --signature (the X-Svc-Signature header; two during a secret rotation). The timestamp (X-Svc-Signature-Timestamp, Unix milliseconds) must be within --tolerance seconds of now. --body is the exact raw body as received (a file, or - for standard input when the secret comes from a file).`;
  static override examples = [
    "printf %s \"$SECRET\" | <%= config.bin %> webhooks verify --secret-stdin --body body.json --signature 'sha256=4f…' --timestamp 1764072000000",
    "<%= config.bin %> webhooks verify --secret-file ./secret --body - --signature \"$SIG\" --timestamp \"$TS\" < body.json",
  ];
  static override flags = {
    ...secretFlags,
    body: Flags.string({ summary: 'The raw body as received: a file, or - for standard input.', required: true, helpValue: '<file>' }),
    signature: Flags.string({ summary: 'The X-Svc-Signature header value (sha256=…).', required: true }),
    timestamp: Flags.string({ summary: 'The X-Svc-Signature-Timestamp header value (Unix milliseconds).', required: true }),
    tolerance: Flags.integer({ summary: 'How far the timestamp may be from now, in seconds.', default: 300, min: 0 }),
  };

  async run() {
    if (this.flags.body === '-' && this.flags['secret-stdin']) throw new UsageError('--body - and --secret-stdin cannot both read standard input', '--body');
    if (this.flags.body === '-' && this.flags['secret-file'] === '-') throw new UsageError('--body - and --secret-file - cannot both read standard input', '--body');
    const secret = await secretFrom(this.flags);
    if (secret === undefined) throw new UsageError('The secret is required: --secret-stdin or --secret-file', '--secret-stdin');
    const body = await readFlagFile(this.flags.body, '--body');
    const result = verifySignature({ secret, body, signature: this.flags.signature, timestamp: this.flags.timestamp, toleranceSeconds: this.flags.tolerance });
    if (!result.valid) {
      this.warn(`Invalid: ${result.reason}`);
      this.exit(1);
    }
    this.info('Valid signature.');
    return { valid: true };
  }
}
