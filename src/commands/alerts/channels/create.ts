import { CHANNEL_COLUMNS } from '../../../cli/alert-columns.js';
import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { alertChannels } from '../../../client/endpoints.js';

const def = alertChannels.create;
const body = bodyFlags(def, {
  descriptions: {
    config:
      'Configuration of the type as JSON, e.g. {"recipients":["ops@example.com"]}. Configs with secrets (webhook URLs, keys, tokens, passwords) belong in --from-file, not on the command line.',
  },
});

export default class AlertsChannelsCreate extends ApiCommand<typeof AlertsChannelsCreate> {
  static override summary = 'Create a notification channel: email, slack, teams, webhook, pagerduty or sms (needs a session with MFA)';
  static override description = `Keys of each type (02 §2.4): email recipients|to; slack/teams webhookUrl; webhook url (HTTPS), method, headers, authType (none, bearer, basic, api_key), authToken, authUsername, authPassword, apiKeyHeader, apiKeyValue, timeout (1000-60000 ms), retryCount, payloadTemplate; pagerduty routingKey|integrationKey, severity, source, component, group, class, dedupKey, customDetails, timeout; sms phoneNumbers (E.164), from, messagingServiceSid. Secrets are stored encrypted and shown masked.`;
  static override examples = [
    `<%= config.bin %> alerts channels create --org-id 3b9e… --name "On-call mail" --type email --config '{"recipients":["oncall@example.com"]}'`,
    '<%= config.bin %> alerts channels create --from-file pagerduty-channel.yaml',
  ];
  static override flags = { ...body.flags, ...createFlags };
  static override columns = CHANNEL_COLUMNS;

  async run() {
    return this.call(def, { body: await this.bodyFrom(body) });
  }
}
