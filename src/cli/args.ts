import { Args } from './flags.js';

/** The one positional argument of commands that act on a resource (CLI.md "Grammar"). */
export const idArg = (what: string) => ({ id: Args.string({ required: true, description: `${what} id` }) });
