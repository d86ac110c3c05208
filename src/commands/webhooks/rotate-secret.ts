import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { UsageError } from '../../cli/prompts.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { secretFlags, secretFrom } from '../../cli/webhook-flags.js';
import { webhooks } from '../../client/endpoints.js';

const body = bodyFlags(webhooks.rotateSecret, { omit: ['secret'] });

export default class WebhooksRotateSecret extends ApiCommand<typeof WebhooksRotateSecret> {
  static override summary = 'Replace the signing secret; the old one keeps signing too for the overlap window';
  static override description = `During the overlap (--overlap-seconds, default 86400) every delivery carries two signatures in X-Svc-Signature, "sha256=<new>,sha256=<old>", so receivers can switch to the new secret at any moment of the window.`;
  static override examples = ['printf %s "$NEW" | <%= config.bin %> webhooks rotate-secret 61c7… --secret-stdin --overlap-seconds 3600 --yes'];
  static override args = idArg('Webhook');
  static override flags = { ...body.flags, ...secretFlags, ...updateFlags };

  async run() {
    // Asked before the secret is read: a refusal leaves the piped secret unread and unsent.
    await this.confirm(`Rotate the signing secret of webhook ${this.args.id}?`);
    const secret = await secretFrom(this.flags);
    if (secret === undefined) throw new UsageError('The new secret is required: --secret-stdin or --secret-file', '--secret-stdin');
    return this.call(webhooks.rotateSecret, { params: { id: this.args.id }, body: { ...(await this.bodyFrom(body)), secret } });
  }
}
