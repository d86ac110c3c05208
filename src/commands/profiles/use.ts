import { Args } from '../../cli/flags.js';
import { BaseCommand, CommandError, honouring } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { ProfileStore } from '../../cli/profiles.js';

export default class ProfilesUse extends BaseCommand<typeof ProfilesUse> {
  static override summary = 'Select the profile that commands use by default';
  static override description = 'The selection is overridden by --profile and SVC_PROFILE (flag > environment > selected profile > "default").';
  static override examples = ['<%= config.bin %> profiles use staging'];
  static override baseFlags = honouring(BaseCommand.baseFlags, []);
  static override args = { name: Args.string({ required: true, description: 'Profile name' }) };

  async run() {
    const store = new ProfileStore();
    if (!(await store.get(this.args.name))) {
      throw new CommandError(`No profile named "${this.args.name}"`, ExitCode.USAGE, 'PROFILE_NOT_FOUND', 'See `svc profiles list`, or create one with `svc login --profile NAME`.');
    }
    await store.use(this.args.name);
    this.info(`Commands now use profile "${this.args.name}".`);
    return undefined;
  }
}
