import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { Flags } from '../../../cli/flags.js';
import { listFilterFlags } from '../../../cli/schema-flags.js';
import { psa } from '../../../client/endpoints.js';

const filters = listFilterFlags(psa.tickets);

export default class PsaTicketsList extends ApiCommand<typeof PsaTicketsList> {
  static override summary = 'List PSA tickets opened for alerts, most recently updated first (of one connection with --connection)';
  static override examples = [
    '<%= config.bin %> psa tickets list',
    '<%= config.bin %> psa tickets list --connection 61c7… --status Closed',
  ];
  static override flags = {
    ...filters.flags,
    connection: Flags.string({ summary: 'Only the tickets of this PSA connection.', helpValue: '<id>', exclusive: ['org-id'] }),
    ...listFlags,
  };
  static override columns = ['id', 'psaId', 'title', 'status', 'syncedAt', 'raw.externalTicketId', 'raw.alertId'];

  async run() {
    const query = this.queryFrom(filters);
    const connection = this.flags.connection;
    if (connection !== undefined) {
      const { orgId: _ignored, ...rest } = query;
      return this.list(psa.connectionTickets, { params: { id: connection }, query: rest });
    }
    return this.list(psa.tickets, { query });
  }
}
