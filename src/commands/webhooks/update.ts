import { idArg } from '../../cli/args.js';
import { ApiCommand, updateFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { headerFlag, headersFrom, secretFlags, secretFrom } from '../../cli/webhook-flags.js';
import { webhooks } from '../../client/endpoints.js';

const body = bodyFlags(webhooks.update, { omit: ['secret', 'headers'] });

export default class WebhooksUpdate extends ApiCommand<typeof WebhooksUpdate> {
  static override summary = 'Change a webhook: name, URL, events, headers, status (active, paused, failed) or secret';
  static override description = `--header replaces the whole header list (a value of only * keeps that header's stored value). A new secret (--secret-stdin or --secret-file) replaces the old one at once; to let receivers switch over, use \`svc webhooks rotate-secret\`.`;
  static override examples = [
    '<%= config.bin %> webhooks update 61c7… --status paused',
    '<%= config.bin %> webhooks update 61c7… --events alert.triggered --events device.enrolled',
  ];
  static override args = idArg('Webhook');
  static override flags = { ...body.flags, ...secretFlags, ...headerFlag, ...updateFlags };
  static override columns = ['id', 'name', 'url', 'status', 'events', 'orgId', 'hasSecret'];

  async run() {
    const secret = await secretFrom(this.flags);
    const headers = headersFrom(this.flags.header);
    const request = { params: { id: this.args.id }, body: { ...(await this.bodyFrom(body)), ...(secret ? { secret } : {}), ...(headers ? { headers } : {}) } };
    return this.call(webhooks.update, request);
  }
}
