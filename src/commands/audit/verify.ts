import { ApiCommand } from '../../cli/api-command.js';
import { CommandError } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { audit } from '../../client/endpoints.js';

const def = audit.verify;
const filters = queryFlags(def, { descriptions: { orgId: "Check only this organization's chain." } });

export default class AuditVerify extends ApiCommand<typeof AuditVerify> {
  static override summary = 'Check the checksum chains of the audit log; exits 6 when one is broken';
  static override description = `Walks every hash chain the caller can see (one per organization, one per partner, one for the platform). Exit code 0 when every chain is intact; 6 (invalid state) when one is broken, with the first broken entry of each chain in the output. Tables and CSV list one row per chain; JSON and YAML print the server's whole answer.`;
  static override examples = ['<%= config.bin %> audit verify', '<%= config.bin %> audit verify --org-id 3b9e… --output json'];
  static override flags = { ...filters.flags };
  static override columns = ['chain', 'entries', 'valid', 'firstBroken.seq', 'firstBroken.id', 'firstBroken.reason'];

  async run() {
    const result = await this.call(audit.verify, { query: this.queryFrom(filters) });
    const tabular = this.format === 'table' || this.format === 'csv';
    if (result.valid) {
      this.info(`Every audit chain is intact (${result.chains.length} checked).`);
      return tabular ? result.chains : result;
    }
    this.print(tabular ? result.chains : result);
    const broken = result.chains.filter((c) => !c.valid);
    const where = broken.map((c) => `${c.chain} at entry ${c.firstBroken?.seq ?? '?'}${c.firstBroken ? ` (${c.firstBroken.reason})` : ''}`).join('; ');
    throw new CommandError(`The audit log is not intact: ${broken.length} broken chain(s): ${where}`, ExitCode.CONFLICT, 'AUDIT_CHAIN_BROKEN');
  }
}
