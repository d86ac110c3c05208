import { ApiCommand, createFlags } from '../../cli/api-command.js';
import { UsageError } from '../../cli/prompts.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { headerFlag, headersFrom, secretFlags, secretFrom } from '../../cli/webhook-flags.js';
import { webhooks } from '../../client/endpoints.js';

const body = bodyFlags(webhooks.create, { omit: ['secret', 'headers'] });

export default class WebhooksCreate extends ApiCommand<typeof WebhooksCreate> {
  static override summary = 'Create a webhook: an HTTPS URL that receives signed event deliveries (needs a session with MFA)';
  static override description = `The signing secret never comes from arguments: pipe it with --secret-stdin or name a file with --secret-file. The URL must be HTTPS and public (the server refuses local and private addresses). --events takes event types such as alert.triggered, or * for all.`;
  static override examples = [
    'printf %s "$SECRET" | <%= config.bin %> webhooks create --org-id 3b9e… --name ops --url https://hooks.example.com/svc --events alert.triggered,alert.resolved --secret-stdin',
    '<%= config.bin %> webhooks create --name ops --url https://hooks.example.com/svc --events "*" --secret-file ./secret --header "X-Team: blue"',
  ];
  static override flags = { ...body.flags, ...secretFlags, ...headerFlag, ...createFlags };
  static override columns = ['id', 'name', 'url', 'status', 'events', 'orgId', 'hasSecret'];

  async run() {
    const secret = await secretFrom(this.flags);
    if (secret === undefined) throw new UsageError('A signing secret is required: --secret-stdin or --secret-file', '--secret-stdin');
    const headers = headersFrom(this.flags.header);
    return this.call(webhooks.create, { body: { ...(await this.bodyFrom(body)), secret, ...(headers ? { headers } : {}) } });
  }
}
