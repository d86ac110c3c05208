import { BaseCommand } from '../../cli/base-command.js';
import { ProfileStore } from '../../cli/profiles.js';

export default class ProfilesList extends BaseCommand<typeof ProfilesList> {
  static override summary = 'List the saved profiles (connections); the current one is marked';
  static override examples = ['<%= config.bin %> profiles list', '<%= config.bin %> profiles list --output json'];
  static override columns = ['name', 'current', 'baseUrl', 'email', 'authKind', 'storage'];
  static override quietField = 'name';

  async run() {
    const store = new ProfileStore();
    const [profiles, current] = await Promise.all([store.list(), store.current()]);
    return Object.entries(profiles)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, p]) => ({ name, current: name === current, baseUrl: p.baseUrl, email: p.email ?? null, authKind: p.authKind, storage: p.storage ?? null, userId: p.userId ?? null }));
  }
}
