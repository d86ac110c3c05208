// Flag and argument definitions in oclif's shape, without loading oclif: commands declare their flags with these,
// oclif reads them for help, the manifest and completion, and svc's own runner (src/cli/runtime) parses argv
// with them. Only the kinds svc uses exist here; their parse functions and messages are oclif's.
import type { Args as OclifArgs, Flags as OclifFlags } from '@oclif/core';

/** oclif's integer parse (decimal digits only), refusing what a double cannot hold; the parser reports a failure as
 * a usage error naming the flag. */
function parseInteger(input: string, _ctx: unknown, opts: { min?: number; max?: number }): Promise<number> {
  const fail = (message: string) => Promise.reject(new Error(message));
  if (!/^-?\d+$/.test(input)) return fail(`Expected an integer but received: ${input}`);
  const num = Number.parseInt(input, 10);
  // Beyond 2^53 the number read is not the number typed; oclif takes it rounded.
  if (!Number.isSafeInteger(num)) return fail(`Expected an integer but received: ${input}`);
  if (opts.min !== undefined && num < opts.min)
    return fail(`Expected an integer greater than or equal to ${opts.min} but received: ${input}`);
  if (opts.max !== undefined && num > opts.max)
    return fail(`Expected an integer less than or equal to ${opts.max} but received: ${input}`);
  return Promise.resolve(num);
}

const identity = (input: unknown) => Promise.resolve(input);

function option(defaults: Record<string, unknown> = {}) {
  return (options: Record<string, unknown> = {}) => ({
    parse: identity,
    ...defaults,
    ...options,
    input: [],
    multiple: Boolean(options.multiple ?? false),
    type: 'option',
  });
}

export const Flags = {
  string: option() as unknown as typeof OclifFlags.string,
  integer: option({ parse: parseInteger }) as unknown as typeof OclifFlags.integer,
  boolean: ((options: Record<string, unknown> = {}) => ({
    parse: identity,
    ...options,
    allowNo: Boolean(options.allowNo),
    type: 'boolean',
  })) as unknown as typeof OclifFlags.boolean,
};

export const Args = {
  string: ((options: Record<string, unknown> = {}) => ({
    parse: identity,
    ...options,
    input: [],
    type: 'option',
  })) as unknown as typeof OclifArgs.string,
};
