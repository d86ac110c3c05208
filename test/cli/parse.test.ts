import fs from 'node:fs';
import path from 'node:path';
import { parse as oclifParse } from '@oclif/core/parser';
import { afterEach, describe, expect, it } from 'vitest';
import { parseArgv, type ArgDef, type FlagDef } from '../../src/cli/runtime/parse.js';
import { UsageError } from '../../src/cli/prompts.js';
import Api from '../../src/commands/api.js';
import AccessReviewsDecide from '../../src/commands/access-reviews/decide.js';
import Login from '../../src/commands/login.js';
import OrgsGet from '../../src/commands/orgs/get.js';
import OrgsList from '../../src/commands/orgs/list.js';
import PamExport from '../../src/commands/pam/export.js';
import PamRulesUpdate from '../../src/commands/pam/rules/update.js';
import RolesUpdate from '../../src/commands/roles/update.js';
import ScriptsRun from '../../src/commands/scripts/run.js';
import GroupsAdd from '../../src/commands/groups/add.js';

interface CommandLike {
  flags?: object;
  baseFlags?: object;
  args?: object;
  strict?: boolean;
}

type Outcome = { flags: Record<string, unknown>; args: Record<string, unknown> } | { error: string };

// oclif dims some messages on a terminal; compare the words.
// eslint-disable-next-line no-control-regex
const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

async function outcome(run: () => Promise<{ flags: object; args: object }>): Promise<Outcome> {
  try {
    const { flags, args } = await run();
    return { flags: { ...flags }, args: { ...args } };
  } catch (err) {
    return { error: plain((err as Error).message) };
  }
}

function inputs(command: CommandLike) {
  const flags = { ...command.baseFlags, ...command.flags } as Record<string, FlagDef>;
  const args = (command.args ?? {}) as Record<string, ArgDef>;
  return { flags, args, strict: command.strict ?? true };
}

/** What svc's parser and oclif's own make of the same argv: equal values, or equal error messages. */
async function both(command: CommandLike, argv: string[]) {
  const input = inputs(command);
  const ours = await outcome(() => parseArgv(argv, input));
  // oclif reads stdin for a missing argument; svc does not (see src/cli/runtime/parse.ts).
  const oclifArgs = Object.fromEntries(Object.entries(input.args).map(([name, arg]) => [name, { ...arg, ignoreStdin: true }]));
  const theirs = await outcome(() => oclifParse(argv, { flags: input.flags, args: oclifArgs, strict: input.strict } as never));
  return { ours, theirs };
}

const cases: [string, CommandLike, string[]][] = [
  ['no input', OrgsList, []],
  ['long flag and value', OrgsList, ['--output', 'json', '--limit', '5']],
  ['long flag=value', OrgsList, ['--output=csv', '--page=2']],
  ['short flag, separate and joined value', OrgsList, ['-o', 'yaml', '-q']],
  ['short flag with joined value', OrgsList, ['-ojsonl']],
  ['short flag with =value', OrgsList, ['-o=json']],
  ['combined short booleans and option', OrgsGet, ['abc', '-qo', 'json']],
  ['--no- on a boolean that allows it', PamRulesUpdate, ['r1', '--no-enabled']],
  ['--no- on a boolean that does not, after a bad value', AccessReviewsDecide, ['r1', '--item', 'i1', '--decision', 'approve', '--no-yes']],
  ['--no- on a boolean that does not', OrgsList, ['--no-debug']],
  ['a value outside the options', OrgsList, ['-o', 'xml']],
  ['an integer flag given a word', OrgsList, ['--limit', 'ten']],
  ['an integer below its minimum', OrgsList, ['--limit', '0']],
  ['an integer above its maximum', OrgsList, ['--limit', '101']],
  ['a flag that does not exist', OrgsList, ['--bogus', '-z']],
  ['an option flag with no value', OrgsList, ['--partner-id']],
  ['an option flag whose value is a flag', OrgsList, ['--output', '--debug']],
  ['an option flag given twice', OrgsList, ['-o', 'json', '-o', 'csv']],
  ['exclusive flags together', OrgsList, ['--accessible', '--limit', '5']],
  ['exclusive flags, one defaulted', PamExport, ['--from', 'a', '--to', 'b', '--allow-incomplete', '--poll-seconds', '5']],
  ['dependsOn unmet', PamExport, ['--from', 'a', '--to', 'b', '--resume']],
  ['dependsOn met, defaults applied', PamExport, ['--from', 'a', '--to', 'b', '--resume', '--out', 'x.csv']],
  ['a required argument missing', OrgsGet, []],
  ['a required argument missing, with a multiple flag', RolesUpdate, ['--permission', 'a:read']],
  ['an argument too many', OrgsGet, ['a', 'b']],
  ['-- ends the flags', OrgsGet, ['--', '-q']],
  ['a negative number is an argument', OrgsGet, ['-5']],
  ['a multiple flag takes the words after it', RolesUpdate, ['r1', '--permission', 'a:read', 'b:write', '--name', 'x']],
  ['a multiple flag repeated', RolesUpdate, ['r1', '--permission', 'a:read', '--permission', 'b:write']],
  ['arguments of a command with several', Api, ['GET', '/orgs/partners', '--paginate']],
  ['exclusive flags of login', Login, ['--api-key-stdin', '--email', 'a@b.c']],
  ['a delimited multiple flag: comma lists and repeats', ScriptsRun, ['s1', '--device', 'a,b', '--device', ' c , d', '--yes']],
  ['a delimited multiple flag: greedy words are split too', ScriptsRun, ['s1', '--device', 'a,b', 'c']],
  ['extra arguments beside flags (strict false)', GroupsAdd, ['g1', 'd1', '-o', 'json', 'd2', '--yes', 'd3']],
];

describe('CLI.md "Grammar": svc parses argv as oclif does', () => {
  it('CLI.md "Grammar": the extra arguments of a command that takes several ids leave out flags and their values', async () => {
    const { argv } = await parseArgv(['g1', 'd1', '-o', 'json', 'd2', '--timeout', '30', 'd3', '--yes'], inputs(GroupsAdd));
    expect(argv).toEqual(['d2', 'd3']);
  });

  for (const [name, command, argv] of cases) {
    it(`${name}: ${argv.join(' ') || '(nothing)'}`, async () => {
      const { ours, theirs } = await both(command, argv);
      expect(ours).toEqual(theirs);
    });
  }

  describe('values from the environment', () => {
    const saved = process.env.SVC_BASE_URL;
    afterEach(() => {
      if (saved === undefined) delete process.env.SVC_BASE_URL;
      else process.env.SVC_BASE_URL = saved;
    });

    it('an env flag takes the variable when the flag is not given, and the flag wins when it is', async () => {
      process.env.SVC_BASE_URL = 'http://from-env.test';
      for (const argv of [[], ['--base-url', 'http://from-flag.test']]) {
        const { ours, theirs } = await both(OrgsList, argv);
        expect(ours).toEqual(theirs);
      }
      const { ours } = await both(OrgsList, []);
      expect(ours).toMatchObject({ flags: { 'base-url': 'http://from-env.test' } });
    });
  });

  // oclif caches the first flag's exclusive list for every later flag, so it names one pair twice; svc names each.
  it('exclusive flags given together name each conflict once', async () => {
    const failure = await parseArgv(['--from', 'a', '--to', 'b', '--follow', '--allow-incomplete'], inputs(PamExport)).then(
      () => undefined,
      (err: unknown) => (err as Error).message,
    );
    expect(failure).toBe(
      'The following errors occurred:\n  --follow=true cannot also be provided when using --allow-incomplete\n  --allow-incomplete=true cannot also be provided when using --follow\nSee more help with --help',
    );
  });

  // A deliberate difference (docs/api-notes.md "The CLI"): an unknown flag is followed by the one it probably meant.
  it('CLI.md "Grammar": an unknown flag is followed by the flag it probably meant, otherwise oclif\'s message', async () => {
    const { ours, theirs } = await both(OrgsList, ['--url', 'http://x.test', '--ouptut=csv', '--bogus']);
    expect(theirs).toEqual({ error: 'Nonexistent flags: --url, --ouptut=csv, --bogus\nSee more help with --help' });
    expect(ours).toEqual({
      error:
        'Nonexistent flags: --url, --ouptut=csv, --bogus\nDid you mean --base-url for --url?\nDid you mean --output for --ouptut?\nSee more help with --help',
    });
    const one = await both(OrgsList, ['--lmit', '5']);
    expect(one.ours).toEqual({ error: 'Nonexistent flag: --lmit\nDid you mean --limit?\nSee more help with --help' });
  });

  // A deliberate difference (docs/api-notes.md "The CLI"): a required flag is named as typed.
  it('issue 9 item 9: a missing required flag is named as typed (--from), not as oclif names it (from)', async () => {
    const { ours, theirs } = await both(PamExport, []);
    expect(theirs).toEqual({ error: 'The following errors occurred:\n  Missing required flag from\n  Missing required flag to\nSee more help with --help' });
    expect(ours).toEqual({ error: 'The following errors occurred:\n  Missing required flag --from\n  Missing required flag --to\nSee more help with --help' });
  });

  it('issue 9 item 8: an integer flag takes decimal digits only, and no more than a double holds exactly', async () => {
    for (const value of ['0x10', '1e3', ' 7', '', '99999999999999999999']) {
      const { ours, theirs } = await both(OrgsList, ['--page', value]);
      expect(theirs).toEqual(ours);
      expect(ours).toEqual({ error: `Parsing --page \n\tExpected an integer but received: ${value}\nSee more help with --help` });
    }
  });

  it('every parse failure is a usage error (exit 2)', async () => {
    const failure = await parseArgv(['--bogus'], inputs(OrgsList)).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(UsageError);
    expect((failure as UsageError).exitCode).toBe(2);
  });
});

/** A small seeded PRNG (mulberry32): the same cases on every run, a different set for another seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One argv for a command, made from its declared flags and args: valid and invalid values, every syntax. */
function randomArgv(random: () => number, command: CommandLike): string[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const { flags, args } = inputs(command);
  const names = Object.keys(flags);
  const words = ['x', 'a b', '7', '-3', '0', '101', 'ten', 'null', '{"a":1}', 'a:read,b:write', '2026-01-01T00:00:00Z', ''];
  const argv: string[] = [];
  const argNames = Object.keys(args);
  const positional = () => (random() < 0.8 ? pick(['abc', '9f1e', 'GET', '/orgs', '--', 'extra']) : pick(words));
  for (let i = 0, n = Math.floor(random() * (argNames.length + 2)); i < n; i++) argv.push(positional());
  for (let i = 0, n = Math.floor(random() * 5); i < n; i++) {
    const roll = random();
    if (roll < 0.05) {
      argv.push(pick(['--bogus', '-Z', '--', '--no-bogus']));
      continue;
    }
    const name = pick(names);
    const def = flags[name];
    if (!def) continue;
    const value = def.options && random() < 0.7 ? pick(def.options) : pick(words);
    if (def.type === 'boolean') {
      if (def.char && random() < 0.3) argv.push(`-${def.char}`);
      else argv.push(random() < 0.2 ? `--no-${name}` : `--${name}`);
      continue;
    }
    const syntax = random();
    if (syntax < 0.4) argv.push(`--${name}`, value);
    else if (syntax < 0.6) argv.push(`--${name}=${value}`);
    else if (syntax < 0.75 && def.char) argv.push(`-${def.char}`, value);
    else if (syntax < 0.85 && def.char) argv.push(`-${def.char}${value}`);
    else if (syntax < 0.92) argv.push(`--${name}`);
    else argv.push(`--${name}`, value, pick(words));
  }
  // Arguments after the flags, too: multiple-value flags take them greedily.
  if (random() < 0.3) argv.push(positional());
  return argv;
}

/**
 * Random argv often holds several mistakes at once, and oclif and svc may name a different one first (svc checks
 * flags in the order given, oclif all at once); oclif also lists extra arguments sorted by their first occurrence,
 * so a repeated word moves. The fixed cases above compare messages; here, parsed values must be equal and a
 * failure must be a failure in both (a usage error, exit 2, either way).
 */
function comparable(result: Outcome): Outcome | { failed: true } {
  return 'error' in result ? { failed: true } : result;
}

const COMMANDS_DIR = path.join(import.meta.dirname, '..', '..', 'src', 'commands');
const commandFiles = fs
  .readdirSync(COMMANDS_DIR, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .sort();

describe('CLI.md "Grammar": svc parses random argv of every command as oclif does (seeded, bounded)', () => {
  const SEED = 20261125;
  const CASES_PER_COMMAND = 20;
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it(`covers every command file (${commandFiles.length})`, () => {
    expect(commandFiles.length).toBeGreaterThan(90);
  });

  for (const file of commandFiles) {
    it(`svc ${file.replace(/\.ts$/, '').split(path.sep).join(' ')}`, async () => {
      // Flags with an env variable would read this process's environment in both parsers alike; keep it clean.
      delete process.env.SVC_PROFILE;
      delete process.env.SVC_BASE_URL;
      const module = (await import(path.join(COMMANDS_DIR, file))) as { default: CommandLike };
      const random = prng(SEED ^ [...file].reduce((h, c) => Math.imul(h, 31) + c.charCodeAt(0), 7));
      for (let i = 0; i < CASES_PER_COMMAND; i++) {
        const argv = randomArgv(random, module.default);
        const { ours, theirs } = await both(module.default, argv);
        expect(comparable(ours), `argv: ${JSON.stringify(argv)}`).toEqual(comparable(theirs));
      }
    });
  }
});
