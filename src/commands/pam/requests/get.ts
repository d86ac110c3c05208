import { ApiCommand } from '../../../cli/api-command.js';
import { idArg } from '../../../cli/args.js';
import { pam } from '../../../client/endpoints.js';

export default class PamRequestsGet extends ApiCommand<typeof PamRequestsGet> {
  static override summary = 'Show an elevation request: what was asked, on which device, and how it was decided';
  static override examples = [
    '<%= config.bin %> pam requests get 2a7c…',
    '<%= config.bin %> pam requests get 2a7c… --output json',
  ];
  static override args = idArg('Elevation request');

  async run() {
    return (await this.call(pam.getRequest, { params: { id: this.args.id } })).request;
  }
}
