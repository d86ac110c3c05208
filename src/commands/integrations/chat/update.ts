import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { Args, Flags } from '../../../cli/flags.js';
import { NO_FIELDS, configFileFlag, given, orgFlag, orgQuery } from '../../../cli/integration-flags.js';
import { secretField, secretFieldFlags } from '../../../cli/secret-flags.js';
import { integrations } from '../../../client/endpoints.js';

export default class IntegrationsChatUpdate extends ApiCommand<typeof IntegrationsChatUpdate> {
  static override summary = 'Save the settings of one chat provider; --test also queues a test notification (needs a session with MFA)';
  static override description = `The provider's incoming-webhook URL is a secret: pipe it with --webhook-url-stdin or name a file with --webhook-url-file. The settings are replaced as a whole; without a new URL the stored one is kept.`;
  static override examples = [
    'printf %s "$SLACK_HOOK" | <%= config.bin %> integrations chat update slack --org-id 3b9e… --webhook-url-stdin --channel "#ops" --notify-on critical,high --test',
    '<%= config.bin %> integrations chat update discord --webhook-url-file ./discord-hook --username svc',
  ];
  static override args = { provider: Args.string({ required: true, description: 'Chat provider', options: ['slack', 'teams', 'discord'] }) };
  static override flags = {
    ...orgFlag,
    ...secretFieldFlags('webhook-url', 'incoming-webhook URL'),
    channel: Flags.string({ summary: 'Channel to post to (Slack).' }),
    username: Flags.string({ summary: 'Name the messages are posted under (Slack, Discord).' }),
    'notify-on': Flags.string({ summary: 'Alert severities to notify on, comma-separated or repeated.', multiple: true }),
    test: Flags.boolean({ summary: 'Also queue a test notification to the webhook URL.' }),
    ...configFileFlag,
    ...mutationFlags,
  };

  async run() {
    // Named one by one so the endpoint each provider posts to is plain to read (and to the --dry-run check).
    const endpoint = { slack: integrations.slack, teams: integrations.teams, discord: integrations.discord }[this.args.provider as 'slack' | 'teams' | 'discord'];
    const flags = this.flags as Record<string, unknown>;
    // The stored settings (URL masked) when no new URL is given: the server keeps the URL a masked value names.
    let webhookUrl = await secretField(flags, 'webhook-url');
    if (webhookUrl === undefined && flags['from-file'] === undefined && !this.flags['dry-run']) {
      const current = await this.call(integrations.communication, { query: orgQuery(this.flags) }).catch(() => undefined);
      const stored = current?.data[this.args.provider as 'slack' | 'teams' | 'discord']?.webhookUrl;
      if (typeof stored === 'string') webhookUrl = stored;
    }
    const notifyOn = this.flags['notify-on']?.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
    const body = { ...(await this.bodyFrom(NO_FIELDS)), ...given({ webhookUrl, channel: this.flags.channel, username: this.flags.username, notifyOn, test: this.flags.test || undefined }) };
    return this.call(endpoint, { query: orgQuery(this.flags), body });
  }
}
