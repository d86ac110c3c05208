import { createCommand } from '../../../cli/resource-commands.js';
import { CHANNEL_COLUMNS } from '../../../cli/alert-columns.js';
import { alertChannels } from '../../../client/endpoints.js';

export default createCommand(alertChannels.create, {
  summary: 'Create a notification channel: email, slack, teams, webhook, pagerduty or sms (needs a session with MFA)',
  description: `Keys of each type (02 §2.4): email recipients|to; slack/teams webhookUrl; webhook url (HTTPS), method, headers, authType (none, bearer, basic, api_key), authToken, authUsername, authPassword, apiKeyHeader, apiKeyValue, timeout (1000-60000 ms), retryCount, payloadTemplate; pagerduty routingKey|integrationKey, severity, source, component, group, class, dedupKey, customDetails, timeout; sms phoneNumbers (E.164), from, messagingServiceSid. Secrets are stored encrypted and shown masked.`,
  examples: [
    `<%= config.bin %> alerts channels create --org-id 3b9e… --name "On-call mail" --type email --config '{"recipients":["oncall@example.com"]}'`,
    '<%= config.bin %> alerts channels create --from-file pagerduty-channel.yaml',
  ],
  columns: CHANNEL_COLUMNS,
  descriptions: {
    config:
      'Configuration of the type as JSON, e.g. {"recipients":["ops@example.com"]}. Configs with secrets (webhook URLs, keys, tokens, passwords) belong in --from-file, not on the command line.',
  },
});
