import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { Flags } from '../../cli/flags.js';
import { UsageError } from '../../cli/prompts.js';
import { filters } from '../../client/endpoints.js';

export default class FiltersPreview extends ApiCommand<typeof FiltersPreview> {
  static override summary = 'Show how many devices a saved filter (or a condition tree in a file) matches, and the first of them';
  static override examples = [
    '<%= config.bin %> filters preview 7d41…',
    '<%= config.bin %> filters preview --where tree.json --org-id 3b9e… --limit 50',
    '<%= config.bin %> filters preview 7d41… --ids-only --output json',
  ];
  static override args = { id: Args.string({ required: false, description: 'Saved filter id' }) };
  static override flags = {
    where: Flags.string({ summary: 'A JSON file with a condition tree, instead of a saved filter' }),
    'org-id': Flags.string({ summary: 'Only devices of this organization (with --where)' }),
    limit: Flags.integer({ summary: 'Devices shown, 1-100 (default 10)', min: 1, max: 100 }),
    'ids-only': Flags.boolean({ summary: 'Every matching device id instead of the first devices' }),
  };
  static override columns = ['id', 'hostname', 'displayName', 'osType', 'status', 'lastSeenAt'];

  async run() {
    const { where, limit } = this.flags;
    const idsOnly = this.flags['ids-only'];
    if ((where === undefined) === (this.args.id === undefined)) throw new UsageError('Give a saved filter id or --where FILE (one of them)');
    const answer =
      where !== undefined
        ? await this.call(filters.preview, {
            query: { ...(this.flags['org-id'] ? { orgId: this.flags['org-id'] } : {}) },
            body: { conditions: await this.readChecked(where, '--where', (await import('../../contract/filters.js')).FilterConditionsSchema), ...(limit ? { limit } : {}), ...(idsOnly ? { idsOnly } : {}) },
          })
        : await this.call(filters.previewSaved, { params: { id: this.args.id ?? '' }, query: { ...(limit ? { limit } : {}), ...(idsOnly ? { idsOnly: 'true' as const } : {}) } });
    const data = answer.data;
    this.infoAfterOutput(`${data.totalCount} device(s) match (evaluated ${data.evaluatedAt})`);
    return 'devices' in data ? data.devices : data.deviceIds.map((id) => ({ id }));
  }
}
