// The argv parser of svc's own command runner: oclif's grammar and messages for the flag kinds svc declares
// (src/cli/flags.ts), without loading oclif (whose parser alone costs more than the rest of a command's start).
// Kept to oclif's behaviour on purpose: `--flag value`, `--flag=value`, `-c value`, `-cvalue`, `--no-flag`,
// greedy multiple-value flags, `--` ending the flags, env and default values, and the exclusive, dependsOn and
// required rules, and `delimiter` on multiple-value flags (`--device a,b`). Not supported (svc declares none):
// variadic args, relationships, stdin values.
import { UsageError } from '../prompts.js';
import { closestFlag } from '../suggest.js';

export interface FlagDef {
  type: 'boolean' | 'option';
  char?: string;
  multiple?: boolean;
  /** With `multiple`: each value is also split on this (oclif's rule: parts trimmed). */
  delimiter?: string;
  options?: readonly string[];
  allowNo?: boolean;
  env?: string;
  default?: unknown;
  required?: boolean;
  exclusive?: readonly string[];
  dependsOn?: readonly string[];
  parse?: (input: never, context: unknown, opts: never) => Promise<unknown>;
}

export interface ArgDef {
  required?: boolean;
  description?: string;
  options?: readonly string[];
  default?: unknown;
  parse?: (input: never, context: unknown, opts: never) => Promise<unknown>;
}

export interface ParseInput {
  flags: Readonly<Record<string, FlagDef>>;
  args: Readonly<Record<string, ArgDef>>;
  strict: boolean;
}

export interface Parsed {
  flags: Record<string, unknown>;
  args: Record<string, unknown>;
  /** Arguments beyond the declared ones (only with `strict: false`). */
  argv: string[];
}

const MORE_HELP = '\nSee more help with --help';

/** oclif's parse errors end by pointing at the help. */
class ParseError extends UsageError {
  constructor(message: string) {
    super(`${message}${MORE_HELP}`);
  }
}

const isTruthy = (value: string) => ['1', 'true', 'y', 'yes'].includes(value.toLowerCase());

interface Token {
  flag: string;
  input: string;
}

/** Parses the argv after the command id against the command's flags and args. */
export async function parseArgv(argv: readonly string[], input: ParseInput): Promise<Parsed> {
  const { flags: defs, args: argDefs } = input;
  const byChar = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) if (def.char) byChar.set(def.char, name);

  /** The flag an argv word names, if any: `--name`, `--no-name` (booleans that allow it) or `-c`. */
  const findFlag = (word: string): { name?: string; isLong: boolean } => {
    if (word.startsWith('--')) {
      const long = word.slice(2);
      if (defs[long]) return { name: long, isLong: true };
      if (long.startsWith('no-')) {
        const negated = defs[long.slice(3)];
        if (negated?.type === 'boolean' && negated.allowNo) return { name: long.slice(3), isLong: true };
      }
      return { isLong: true };
    }
    if (word.startsWith('-')) {
      const char = word[1];
      return { ...(char === undefined ? {} : { name: byChar.get(char) }), isLong: false };
    }
    return { isLong: false };
  };

  const queue = [...argv];
  const tokens: Token[] = [];
  const argTokens: string[] = [];
  const nonExistent: string[] = [];
  let current: FlagDef | undefined;
  let currentName: string | undefined;
  let parsingFlags = true;

  const takeFlag = (word: string): boolean => {
    const { name, isLong } = findFlag(word);
    if (name === undefined) {
      const eq = word.indexOf('=');
      if (eq === -1) return false;
      queue.unshift(word.slice(eq + 1));
      if (takeFlag(word.slice(0, eq))) return true;
      queue.shift();
      return false;
    }
    const def = defs[name] as FlagDef;
    if (def.type === 'option') {
      if (!def.multiple && tokens.some((t) => t.flag === name)) throw new UsageError(`Flag --${name} can only be specified once`);
      current = def;
      currentName = name;
      const value = isLong || word.length < 3 ? queue.shift() : word.slice(word[2] === '=' ? 3 : 2);
      if (value === undefined || findFlag(value).name !== undefined) {
        if (def.options) throw new UsageError(`Flag --${name} expects one of these values: ${def.options.join(', ')}`);
        throw new UsageError(`Flag --${name} expects a value`);
      }
      tokens.push({ flag: name, input: value });
    } else {
      tokens.push({ flag: name, input: word });
      // `-yq`: the remaining short characters are flags of their own.
      if (!isLong && word.length > 2) queue.unshift(`-${word.slice(2)}`);
    }
    return true;
  };

  while (queue.length > 0) {
    const word = queue.shift() as string;
    if (parsingFlags && word.startsWith('-') && word !== '-') {
      if (word === '--') {
        parsingFlags = false;
        continue;
      }
      if (takeFlag(word)) continue;
      if (!/^-\d/.test(word)) {
        nonExistent.push(word);
        continue;
      }
    }
    // A flag that takes several values takes every word up to the next flag (oclif's greedy rule).
    if (parsingFlags && current?.multiple && currentName !== undefined) {
      tokens.push({ flag: currentName, input: word });
      continue;
    }
    argTokens.push(word);
  }

  // Values first, then what is missing or too much, then the rules between flags: oclif's order of errors.
  const args: Record<string, unknown> = {};
  const argNames = Object.keys(argDefs);
  for (const [i, name] of argNames.entries()) {
    const def = argDefs[name] as ArgDef;
    const word = argTokens[i];
    if (word !== undefined) {
      if (def.options && !def.options.includes(word)) throw new ParseError(`Expected ${word} to be one of: ${def.options.join(', ')}`);
      args[name] = def.parse ? await def.parse(word as never, {}, def as never) : word;
    } else if (def.default !== undefined) {
      args[name] = def.default;
    }
  }

  // Flags: given, else from the environment, else the default.
  const flags: Record<string, unknown> = {};
  const fromDefault = new Set<string>();
  const parseValue = async (name: string, def: FlagDef, value: string): Promise<unknown> => {
    if (def.type === 'option' && def.options && !def.options.includes(value))
      throw new ParseError(`Expected --${name}=${value} to be one of: ${def.options.join(', ')}`);
    if (!def.parse) return value;
    try {
      return await def.parse(value as never, {}, def as never);
    } catch (err) {
      throw new ParseError(`Parsing --${name} \n\t${(err as Error).message}`);
    }
  };
  for (const [name, def] of Object.entries(defs)) {
    const given = tokens.filter((t) => t.flag === name);
    const last = given.at(-1);
    if (last !== undefined) {
      if (def.type === 'boolean') flags[name] = await parseValue(name, def, (last.input !== `--no-${name}`) as never);
      else if (def.multiple) {
        const inputs = given.flatMap((t) => (def.delimiter === undefined ? [t.input] : t.input.split(def.delimiter).map((part) => part.trim()).filter(Boolean)));
        flags[name] = await Promise.all(inputs.map((input) => parseValue(name, def, input)));
      }
      else flags[name] = await parseValue(name, def, last.input);
      continue;
    }
    const fromEnv = def.env === undefined ? undefined : process.env[def.env];
    if (fromEnv) flags[name] = def.type === 'boolean' ? isTruthy(fromEnv) : await parseValue(name, def, fromEnv);
    else if (def.default !== undefined) {
      flags[name] = def.default;
      fromDefault.add(name);
    }
  }

  // Unknown flags are an error even without `strict` (which only admits extra arguments), as in oclif.
  if (nonExistent.length > 0) {
    // Not in oclif's message (docs/api-notes.md "The CLI"): the flag each unknown long one may have meant.
    const names = Object.keys(defs);
    const hints = [...new Set(nonExistent)].flatMap((word) => {
      const meant = word.startsWith('--') ? closestFlag(word, names) : undefined;
      return meant === undefined ? [] : [`\nDid you mean --${meant}${nonExistent.length === 1 ? '' : ` for ${word.replace(/=.*$/s, '')}`}?`];
    });
    throw new ParseError(`Nonexistent flag${nonExistent.length === 1 ? '' : 's'}: ${nonExistent.join(', ')}${hints.join('')}`);
  }
  const extra = argTokens.slice(argNames.length);
  if (input.strict && extra.length > 0) throw new ParseError(`Unexpected argument${extra.length === 1 ? '' : 's'}: ${extra.join(', ')}`);
  const missing = argNames.filter((name) => argDefs[name]?.required && args[name] === undefined);
  if (missing.length > 0) {
    const width = Math.max(...missing.map((n) => n.length));
    let message = `Missing ${missing.length} required arg${missing.length === 1 ? '' : 's'}:\n`;
    message += missing.map((n) => `${n.padEnd(width)}  ${argDefs[n]?.description ?? ''}`.trimEnd()).join('\n');
    // A greedy flag may have swallowed the argument: say so, as oclif does.
    const multiple = Object.keys(defs).filter((name) => defs[name]?.type === 'option' && defs[name].multiple);
    if (multiple.length > 0) {
      const one = multiple.length === 1;
      message += `\n\nNote: ${multiple.map((f) => `--${f}`).join(', ')} allow${one ? 's' : ''} multiple values. Because of this you need to provide all arguments before providing ${one ? 'that flag' : 'those flags'}.`;
      message += '\nAlternatively, you can use "--" to signify the end of the flags and the beginning of arguments.';
    }
    throw new ParseError(message);
  }

  // The rules between flags, reported together as oclif does.
  const failures: string[] = [];
  const present = (name: string) => flags[name] !== undefined && !fromDefault.has(name);
  for (const [name, def] of Object.entries(defs)) {
    if (flags[name] === undefined) {
      // oclif says `flag name`; svc names it as it is typed (`--name`), as every other error does.
      if (def.required) failures.push(`Missing required flag --${name}`);
      continue;
    }
    const conflict = present(name) ? def.exclusive?.find(present) : undefined;
    if (conflict !== undefined) failures.push(`--${conflict}=${String(flags[conflict])} cannot also be provided when using --${name}`);
    if (def.dependsOn?.some((other) => flags[other] === undefined))
      failures.push(`All of the following must be provided when using --${name}: ${def.dependsOn.map((f) => `--${f}`).join(', ')}`);
  }
  if (failures.length > 0) {
    const unique = [...new Set(failures)];
    throw new ParseError(`The following error${unique.length === 1 ? '' : 's'} occurred:\n  ${unique.join('\n  ')}`);
  }

  return { flags, args, argv: extra };
}
