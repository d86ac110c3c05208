import { ApiCommand, listFlags } from '../../../cli/api-command.js';
import { TEMPLATE_COLUMNS, flatPage } from '../../../cli/alerts-command.js';
import { Flags } from '../../../cli/flags.js';
import { listFilterFlags } from '../../../cli/schema-flags.js';
import { alertTemplates } from '../../../client/endpoints.js';

const filters = listFilterFlags(alertTemplates.listTemplates);

export default class AlertsTemplatesList extends ApiCommand<typeof AlertsTemplatesList> {
  static override summary = 'List alert templates: built-in ones first, then by name';
  static override examples = [
    '<%= config.bin %> alerts templates list',
    '<%= config.bin %> alerts templates list --built-in',
    '<%= config.bin %> alerts templates list --severity high --search cpu',
  ];
  static override flags = { ...filters.flags, 'built-in': Flags.boolean({ summary: 'Only the built-in templates' }), ...listFlags };
  static override columns = TEMPLATE_COLUMNS;

  async run() {
    const query = this.queryFrom(filters);
    if (this.flags['built-in']) {
      const { severity, search } = query;
      return this.list(alertTemplates.listBuiltInTemplates, { query: { severity, search } }, flatPage);
    }
    return this.list(alertTemplates.listTemplates, { query }, flatPage);
  }
}
