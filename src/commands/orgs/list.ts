import { Flags } from '../../cli/flags.js';
import { ApiCommand, listFlags } from '../../cli/api-command.js';
import { CommandError } from '../../cli/base-command.js';
import { ExitCode } from '../../cli/exit-codes.js';
import { listFilterFlags } from '../../cli/schema-flags.js';
import { ApiError } from '../../client/errors.js';
import { tenancy } from '../../client/endpoints.js';

const def = tenancy.listOrganizations;
const filters = listFilterFlags(def, { descriptions: { partnerId: 'Only the organizations of this partner.' } });

export default class OrgsList extends ApiCommand<typeof OrgsList> {
  static override summary = 'List organizations';
  static override description = `Pages through GET /orgs/organizations (partner and system callers). Organization-scope users and API keys, which that list refuses, use --accessible: every organization the caller can reach, in one unpaged list.`;
  static override examples = [
    '<%= config.bin %> orgs list',
    '<%= config.bin %> orgs list --partner-id 7f1c… --all --output csv > orgs.csv',
    '<%= config.bin %> orgs list --accessible',
  ];
  static override flags = {
    ...filters.flags,
    ...listFlags,
    accessible: Flags.boolean({
      summary: 'List every organization the caller can reach (unpaged; works for organization-scope callers too).',
      exclusive: ['limit', 'page', 'all'],
    }),
  };
  static override columns = ['id', 'name', 'slug', 'partnerId', 'type', 'status', 'createdAt'];

  async run() {
    const query = this.queryFrom(filters);
    if (this.flags.accessible) {
      const { data } = await this.call(tenancy.listAccessibleOrganizations);
      return query.partnerId === undefined ? data : data.filter((o) => o.partnerId === query.partnerId);
    }
    try {
      return await this.list(def, { query });
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) {
        throw new CommandError(`${err.message} (${[err.code, 'HTTP 403'].filter(Boolean).join(', ')})`, ExitCode.FORBIDDEN, err.code, 'Organization-scope callers: try `svc orgs list --accessible`.', err.status);
      }
      throw err;
    }
  }
}
