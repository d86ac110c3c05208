import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { bodyFlags } from '../../cli/schema-flags.js';
import { webhooks } from '../../client/endpoints.js';

const body = bodyFlags(webhooks.test);

export default class WebhooksTest extends ApiCommand<typeof WebhooksTest> {
  static override summary = 'Queue a test delivery (event webhook.test unless --event is given)';
  static override examples = ['<%= config.bin %> webhooks test 61c7…', '<%= config.bin %> webhooks test 61c7… --event alert.triggered --payload \'{"alertId":"a-1"}\''];
  static override args = idArg('Webhook');
  static override flags = { ...body.flags, ...mutationFlags };

  async run() {
    return this.call(webhooks.test, { params: { id: this.args.id }, body: await this.bodyFrom(body) });
  }
}
