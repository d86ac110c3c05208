import { Args } from '@oclif/core';

/** The one positional argument of commands that act on a resource (CLI.md "Grammar"). */
export const idArg = (what: string) => ({ id: Args.string({ required: true, description: `${what} id` }) });
