import { ApiCommand, mutationFlags } from '../cli/api-command.js';
import { honouring } from '../cli/base-command.js';
import { auth } from '../client/endpoints.js';

export default class Logout extends ApiCommand<typeof Logout> {
  static override summary = "Sign out: revoke the profile's sessions on the server and forget its secrets";
  static override examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --profile staging'];
  // It prints no data: no output flag would do anything.
  static override baseFlags = honouring(ApiCommand.baseFlags, []);
  // It asks nothing; --yes is accepted so that scripts can pass it to every command that changes something (CLI.md).
  static override flags = { yes: mutationFlags.yes };

  async run() {
    const session = await this.session();
    if (!session.connection.persist) {
      this.info('Credentials come from SVC_API_KEY or SVC_TOKEN: there is nothing saved to forget.');
      return undefined;
    }
    const tokens = await session.storedTokens();
    if (tokens) {
      try {
        await this.call(auth.logout);
      } catch {
        this.warn('The server did not confirm the logout; the saved secrets are removed anyway.');
      }
    }
    await session.forgetSecrets();
    this.info(`Logged out of profile "${session.profileName}".`);
    return undefined;
  }
}
