import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as endpoints from '../../src/client/endpoints.js';

/**
 * CLI.md "Scripting conveniences": `--dry-run` on every mutating command, and only there. A command's endpoints are
 * read from its source (`area.name` of src/client/endpoints.ts); `svc api` and `svc profiles remove` send no
 * contract call of their own and describe what they would do themselves.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { flags: Record<string, unknown> }>;
};
const OWN_DRY_RUN = new Set(['api', 'profiles:remove']);
/** Commands that send a POST that changes nothing on the server: sign-in, sign-out, previews. */
const POST_WITHOUT_CHANGE = new Set(['login', 'logout', 'pam:rules:preview', 'filters:preview', 'groups:preview']);

const methods = new Map<string, string>();
const idempotent = new Set<string>();
for (const [area, group] of Object.entries(endpoints))
  if (typeof group === 'object' && group !== null)
    for (const [name, def] of Object.entries(group))
      if (typeof def === 'object' && def !== null && 'method' in def) {
        methods.set(`${area}.${name}`, String(def.method));
        if ('idempotent' in def && def.idempotent === true) idempotent.add(`${area}.${name}`);
      }

/** The contract calls (`area.name`) a command's source makes. */
function endpointsOf(id: string): string[] {
  const base = path.join(ROOT, 'src', 'commands', ...id.split(':'));
  // A topic that is also a command (svc search) lives in its folder's index.ts.
  const source = fs.readFileSync(fs.existsSync(`${base}.ts`) ? `${base}.ts` : path.join(base, 'index.ts'), 'utf8');
  // Text in strings (help, examples such as `--action auth.login`) names no call.
  const code = source.replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`/g, "''");
  return [...code.matchAll(/\b([a-zA-Z]+\.[a-zA-Z]+)\b/g)].flatMap((m) => (methods.has(m[1] ?? '') ? [m[1] as string] : []));
}

function endpointMethods(id: string): string[] {
  return endpointsOf(id).map((call) => methods.get(call) as string);
}

describe('CLI.md "--dry-run on every mutating command" (and on no command that only reads)', () => {
  const ours = Object.entries(manifest.commands).filter(([id]) => !id.startsWith('server:') && !OWN_DRY_RUN.has(id));
  it('every command that sends a call other than GET offers --dry-run, and every one that offers it sends one', () => {
    const wrong: string[] = [];
    for (const [id, command] of ours) {
      const found = endpointMethods(id);
      const mutates = found.some((m) => m !== 'GET');
      const offers = 'dry-run' in command.flags;
      if (offers && !mutates) wrong.push(`${id} offers --dry-run but only reads (${found.join(', ') || 'no endpoint'})`);
      if (!offers && mutates && !POST_WITHOUT_CHANGE.has(id)) wrong.push(`${id} mutates without --dry-run`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('01 "Idempotency" / CLI.md "Scripting conveniences": --idempotency-key only where the server replays it', () => {
  it('every command that offers --idempotency-key calls an endpoint that takes one (else the same key would create twice)', () => {
    const wrong = Object.entries(manifest.commands)
      .filter(([, command]) => 'idempotency-key' in command.flags)
      .filter(([id]) => !endpointsOf(id).some((call) => idempotent.has(call)))
      .map(([id]) => `${id} (${endpointsOf(id).join(', ')})`);
    expect(wrong).toEqual([]);
  });
});
