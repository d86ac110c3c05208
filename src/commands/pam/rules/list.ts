import { ApiCommand } from '../../../cli/api-command.js';
import { RULE_COLUMNS } from '../../../cli/pam-command.js';
import { queryFlags } from '../../../cli/schema-flags.js';
import { pam } from '../../../client/endpoints.js';

const def = pam.listRules;
const filters = queryFlags(def);

export default class PamRulesList extends ApiCommand<typeof PamRulesList> {
  static override summary = 'List elevation rules, in the order the engine tries them (priority, then creation time)';
  static override examples = [
    '<%= config.bin %> pam rules list',
    '<%= config.bin %> pam rules list --org-id 3b9e… --output json',
    '<%= config.bin %> pam rules list --site-id 5c1a… --columns id,name,verdict,matchHash',
  ];
  static override flags = { ...filters.flags };
  static override columns = RULE_COLUMNS;

  async run() {
    return (await this.call(pam.listRules, { query: this.queryFrom(filters) })).rules;
  }
}
