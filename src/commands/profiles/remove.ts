import { Args } from '../../cli/flags.js';
import { mutationFlags } from '../../cli/api-command.js';
import { BaseCommand, CommandError } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { confirmOrRefuse } from '../../cli/prompts.js';
import { CliSession } from '../../cli/session.js';

export default class ProfilesRemove extends BaseCommand<typeof ProfilesRemove> {
  static override summary = 'Remove a profile and the secrets saved for it (the server session is not revoked: use `svc logout` for that)';
  static override examples = ['<%= config.bin %> profiles remove staging', '<%= config.bin %> profiles remove staging --yes'];
  static override args = { name: Args.string({ required: true, description: 'Profile name' }) };
  static override flags = { ...mutationFlags };

  async run() {
    const name = this.args.name;
    // env: {} so SVC_TOKEN / SVC_API_KEY cannot stand in for the profile being removed.
    const session = await CliSession.open({ profile: name, env: {} });
    if (!session.connection.profile) throw new CommandError(`No profile named "${name}"`, ExitCode.USAGE, 'PROFILE_NOT_FOUND', 'See `svc profiles list`.');
    if (this.flags['dry-run']) return { dryRun: true, remove: { profile: name, baseUrl: session.connection.baseUrl, secrets: true } };
    await confirmOrRefuse(`Remove profile "${name}" and its saved secrets?`, { yes: this.flags.yes, terminal: this.terminal });
    await session.forgetSecrets();
    await session.profiles.remove(name);
    this.info(`Removed profile "${name}".`);
    return undefined;
  }
}
