import { Args } from '../../cli/flags.js';
import { ApiCommand } from '../../cli/api-command.js';
import { CommandError } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';

export default class ProfilesShow extends ApiCommand<typeof ProfilesShow> {
  static override summary = 'Show a profile, or the connection commands would use now and where it comes from';
  static override examples = ['<%= config.bin %> profiles show', '<%= config.bin %> profiles show staging', '<%= config.bin %> profiles show --output json'];
  static override args = { name: Args.string({ description: 'Profile name (default: the one in effect)' }) };
  static override quietField = 'name';

  async run() {
    // A named profile is shown as `--profile NAME` would resolve it (the session reads the flag on first use).
    if (this.args.name !== undefined) (this.flags as Record<string, unknown>).profile = this.args.name;
    const session = await this.session();
    const c = session.connection;
    if (this.args.name !== undefined && c.persist && !c.profile) {
      throw new CommandError(`No profile named "${this.args.name}"`, ExitCode.USAGE, 'PROFILE_NOT_FOUND', 'See `svc profiles list`.');
    }
    const credentials = await session.credentialsSource('none (run `svc login`)');
    return {
      name: c.profileName,
      source: c.profileSource,
      baseUrl: c.baseUrl,
      email: c.profile?.email ?? null,
      authKind: c.profile?.authKind ?? (c.credentials.kind === 'apiKey' ? 'apiKey' : c.credentials.kind === 'token' ? 'token' : null),
      credentials,
      configFile: c.persist ? await session.profiles.path() : null,
    };
  }
}
