import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliUser, E2E_TIMEOUT_MS } from '../helpers/cli.js';

interface ManifestFlag {
  helpGroup?: string;
}
const manifest = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', '..', 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { flags: Record<string, ManifestFlag> }>;
};

/** Commands whose own flag of a global's name means the same thing: `server status --base-url` is where to probe. */
const SAME_MEANING = new Set(['server:status base-url']);

describe('CLI.md "Global flags": no command shadows one', () => {
  it('a command flag named like a global flag (--base-url, --profile, …) would silently redirect the global: none exists', () => {
    const globals = new Set<string>();
    for (const command of Object.values(manifest.commands))
      for (const [name, flag] of Object.entries(command.flags)) if (flag.helpGroup === 'GLOBAL') globals.add(name);
    expect([...globals]).toEqual(expect.arrayContaining(['base-url', 'profile', 'debug']));
    const shadows = Object.entries(manifest.commands).flatMap(([id, command]) =>
      Object.entries(command.flags)
        .filter(([name, flag]) => globals.has(name) && flag.helpGroup !== 'GLOBAL' && !SAME_MEANING.has(`${id} ${name}`))
        .map(([name]) => `${id} --${name}`),
    );
    expect(shadows).toEqual([]);
  });

  it('02§4.4 integrations psa update --psa-url sets the body\'s baseUrl while --base-url still names the deployment', { timeout: E2E_TIMEOUT_MS }, async () => {
    const user = cliUser({ SVC_API_KEY: 'unused-by-a-dry-run' });
    try {
      const args = ['integrations', 'psa', 'update', '--psa-url', 'https://acme.example', '--org-id', 'o1', '--dry-run'];
      const dry = await user.json<{ method: string; url: string; body: unknown }>([...args, '--base-url', 'http://127.0.0.1:9']);
      expect(dry).toMatchObject({ method: 'PUT', url: 'http://127.0.0.1:9/api/v1/integrations/psa?orgId=o1', body: { baseUrl: 'https://acme.example' } });
    } finally {
      user.cleanup();
    }
  });
});
