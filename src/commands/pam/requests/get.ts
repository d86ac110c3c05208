import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { getOrFindInList } from '../../../cli/pam-command.js';
import { paginatePages } from '../../../client/paginate.js';
import { pam } from '../../../client/endpoints.js';

export default class PamRequestsGet extends ApiCommand<typeof PamRequestsGet> {
  static override summary = 'Show an elevation request: what was asked, on which device, and how it was decided';
  static override examples = [
    '<%= config.bin %> pam requests get 2a7c…',
    '<%= config.bin %> pam requests get 2a7c… --output json',
  ];
  static override args = idArg('Elevation request');

  async run() {
    const id = this.args.id;
    return getOrFindInList({
      get: async () => (await this.call(pam.getRequest, { params: { id } })).request,
      pages: () =>
        paginatePages(async (page) => {
          const answer = await this.call(pam.listRequests, { query: { page, limit: 100 } });
          return { data: answer.requests, pagination: answer.pagination };
        }),
      what: 'Elevation request',
      id,
      info: (line) => this.info(line),
    });
  }
}
