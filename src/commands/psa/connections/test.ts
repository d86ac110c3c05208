import { confirmCommand } from '../../../cli/resource-commands.js';
import { psa } from '../../../client/endpoints.js';

export default confirmCommand(psa.test, 'PSA connection', {
  summary: "Check a connection's stored credentials with an authenticated call to the provider",
  description: 'Prints {success, message} or {success:false, error}; the outcome is recorded on the connection (lastTestedAt, testStatus). Exits 0 either way: check `success`.',
  examples: ['<%= config.bin %> psa connections test 61c7…', '<%= config.bin %> psa connections test 61c7… -o json | jq .success'],
});
