import { bodyCommand } from '../../../cli/resource-commands.js';
import { software } from '../../../client/endpoints.js';
import { VERSION_COLUMNS } from '../../../cli/software-columns.js';

export default bodyCommand(software.createVersion, {
  what: 'Catalog item',
  summary: "Add a version to a catalog item; it becomes the item's latest (needs a session with MFA)",
  examples: [
    '<%= config.bin %> software versions create 7d41… --version 24.08 --release-date 2024-08-11 --download-url https://files.example/7z2408-x64.msi --supported-platforms windows --sha256 3f5a…',
    '<%= config.bin %> software versions create 7d41… --from-file version.yaml',
  ],
  columns: VERSION_COLUMNS,
  pick: (answer) => answer.data,
});
