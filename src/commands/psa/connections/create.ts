import { ApiCommand, createFlags } from '../../../cli/api-command.js';
import { credentialsFlags, credentialsFrom } from '../../../cli/psa-flags.js';
import { bodyFlags } from '../../../cli/schema-flags.js';
import { psa } from '../../../client/endpoints.js';

const body = bodyFlags(psa.create, { omit: ['credentials'] });

export default class PsaConnectionsCreate extends ApiCommand<typeof PsaConnectionsCreate> {
  static override summary = 'Create a PSA connection (servicenow, jira, connectwise, autotask, freshservice, zendesk); needs a session with MFA';
  static override description = `The credentials never come from arguments: pipe a JSON object with --credentials-stdin or name a file with --credentials-file. They are stored encrypted and never shown again (hasCredentials). Fields per provider: servicenow baseUrl, username, password; jira baseUrl with email and apiToken (or personalAccessToken, or username and password); connectwise baseUrl, companyId, publicKey, privateKey (clientId optional); autotask baseUrl, username, secret, integrationCode; freshservice baseUrl, apiKey; zendesk baseUrl, email, apiToken. --settings '{"autoCreateTickets":true,"minSeverity":"high","projectKey":"OPS"}' opens tickets for alerts.`;
  static override examples = [
    `printf '%s' '{"baseUrl":"https://acme.atlassian.net","email":"bot@acme.com","apiToken":"…"}' | <%= config.bin %> psa connections create --org-id 3b9e… --provider jira --name Jira --credentials-stdin`,
    `<%= config.bin %> psa connections create --provider zendesk --name Helpdesk --credentials-file ./zendesk.json --settings '{"autoCreateTickets":true}'`,
  ];
  static override flags = { ...body.flags, ...credentialsFlags, ...createFlags };
  static override columns = ['id', 'name', 'provider', 'status', 'enabled', 'orgId', 'hasCredentials'];

  async run() {
    const credentials = await credentialsFrom(this.flags);
    return this.call(psa.create, { body: { ...(await this.bodyFrom(body)), ...(credentials ? { credentials } : {}) } });
  }
}
