import { idArg } from '../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../cli/api-command.js';
import { enrollmentKeys } from '../../client/endpoints.js';

export default class EnrollmentKeysDelete extends ApiCommand<typeof EnrollmentKeysDelete> {
  static override summary = 'Delete an enrollment key (permanently; enrolled devices stay)';
  static override examples = [
    '<%= config.bin %> enrollment-keys delete 61c7…',
    '<%= config.bin %> enrollment-keys delete 61c7… --yes',
  ];
  static override args = idArg('Enrollment key');
  static override flags = { ...mutationFlags };

  async run() {
    await this.confirm(`Delete enrollment key ${this.args.id} permanently? Agents can no longer enroll with it.`);
    return this.call(enrollmentKeys.delete, { params: { id: this.args.id } });
  }
}
