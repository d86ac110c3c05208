import { ApiCommand } from '../cli/api-command.js';
import { auth, tenancy } from '../client/endpoints.js';

export default class Whoami extends ApiCommand<typeof Whoami> {
  static override summary = 'Show who the current credentials sign in as, and where they are kept';
  static override examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --output json'];
  static override columns = ['email', 'name', 'scope', 'roleName', 'mfaEnabled', 'profile', 'baseUrl', 'credentials'];

  async run() {
    const session = await this.session();
    const c = session.connection;
    const credentials = await session.credentialsSource('none');
    // Credentials from the environment belong to no profile.
    const base = { profile: c.persist ? session.profileName : null, baseUrl: c.baseUrl, credentials };
    if (c.credentials.kind === 'apiKey' || c.profile?.authKind === 'apiKey') {
      const orgs = await this.call(tenancy.listAccessibleOrganizations);
      return { ...base, authKind: 'apiKey', organizations: orgs.data.map((o) => o.name) };
    }
    const me = await this.call(auth.getMe);
    return { ...me, ...base };
  }
}
