import { idArg } from '../../../cli/args.js';
import { ApiCommand, mutationFlags } from '../../../cli/api-command.js';
import { psa } from '../../../client/endpoints.js';

export default class PsaConnectionsTest extends ApiCommand<typeof PsaConnectionsTest> {
  static override summary = "Check a connection's stored credentials with an authenticated call to the provider";
  static override description = 'Prints {success, message} or {success:false, error}; the outcome is recorded on the connection (lastTestedAt, testStatus). Exits 0 either way: check `success`.';
  static override examples = ['<%= config.bin %> psa connections test 61c7…', '<%= config.bin %> psa connections test 61c7… -o json | jq .success'];
  static override args = idArg('PSA connection');
  static override flags = { ...mutationFlags };

  async run() {
    return this.call(psa.test, { params: { id: this.args.id } });
  }
}
