import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { Flags } from '../../cli/flags.js';
import { search } from '../../client/endpoints.js';

export default class Search extends ApiCommand<typeof Search> {
  static override summary = 'Search devices, scripts, alerts and settings (needs a session)';
  static override examples = ['<%= config.bin %> search web-0', '<%= config.bin %> search "cpu high" --limit 50 --output json'];
  static override args = { query: Args.string({ required: true, description: 'What to look for (1-100 characters)' }) };
  static override flags = { limit: Flags.integer({ summary: 'Results, 1-50 (default 20)', min: 1, max: 50 }) };
  static override columns = ['type', 'title', 'description', 'id', 'href'];

  async run() {
    const { results } = await this.call(search.search, { query: { q: this.args.query, ...(this.flags.limit ? { limit: this.flags.limit } : {}) } });
    return results;
  }
}
