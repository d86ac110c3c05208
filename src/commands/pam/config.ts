import { ApiCommand } from '../../cli/api-command.js';
import { CONFIG_COLUMNS } from '../../cli/pam-command.js';
import { queryFlags } from '../../cli/schema-flags.js';
import { pam } from '../../client/endpoints.js';

const def = pam.getConfig;
const filters = queryFlags(def);

export default class PamConfig extends ApiCommand<typeof PamConfig> {
  static override summary =
    "Show an organization's elevation defaults: the verdict when no rule matches, the default approval duration";
  static override description = `Change them with \`svc pam config update\`.`;
  static override examples = [
    '<%= config.bin %> pam config',
    '<%= config.bin %> pam config --org-id 3b9e… --output json',
  ];
  static override flags = { ...filters.flags };
  static override columns = CONFIG_COLUMNS;

  async run() {
    return (await this.call(pam.getConfig, { query: this.queryFrom(filters) })).config;
  }
}
