import { idArg } from '../../cli/args.js';
import { ApiCommand } from '../../cli/api-command.js';
import { enrollmentKeys } from '../../client/endpoints.js';

export default class EnrollmentKeysGet extends ApiCommand<typeof EnrollmentKeysGet> {
  static override summary = "Show an enrollment key's metadata (never the key itself)";
  static override examples = [
    '<%= config.bin %> enrollment-keys get 61c7…',
    '<%= config.bin %> enrollment-keys get 61c7… --output yaml',
  ];
  static override args = idArg('Enrollment key');

  async run() {
    return this.call(enrollmentKeys.get, { params: { id: this.args.id } });
  }
}
