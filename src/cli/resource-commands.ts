import type { EndpointDef, RequestOf } from '../contract/endpoint.js';
import type { ClientEndpoint, FieldDescriptor } from '../contract/projection.js';
import type { CallResult } from '../client/contract-client.js';
import { ApiCommand, createFlags, listFlags, mutationFlags, updateFlags, type ListRequest } from './api-command.js';
import { idArg } from './args.js';
import type { Page } from '../client/paginate.js';
import { UsageError } from './prompts.js';
import {
  bodyFlags,
  listFilterFlags,
  queryFlags,
  type BodyInput,
  type FieldOptions,
  type KeysOf,
} from './schema-flags.js';

/** Why an update with no field to change is refused before anything is sent. */
export const NOTHING_TO_CHANGE = 'Nothing to change: give the fields to change as flags or with --from-file';

/**
 * The one place each repeated command shape is written: `get <id>`, `delete <id>` with confirmation and a paged
 * `list` with the endpoint's filters. A command file names its endpoint and its texts; help, flags and output
 * are those of the hand-written commands these replace.
 */

/** What help shows of a command, and how its output is shaped. */
export interface CommandText {
  summary: string;
  description?: string;
  examples: string[];
  columns?: string[];
  quietField?: string;
}

/** An endpoint addressed by one `:id` path parameter and no body: get, delete, revoke. */
type ByIdEndpoint = EndpointDef & { body?: undefined };

type IdArgs = ReturnType<typeof idArg>;

/** A request of the factories' endpoints: `{params: {id}}` for one addressed by id, `{body}` for one with a body.
 * The constraints of each factory keep every such endpoint's request of this shape, which the generic type
 * cannot show by itself. */
export function requestOf<E extends EndpointDef>(request: { params?: { id: string }; body?: unknown }): RequestOf<E> {
  return request as RequestOf<E>;
}

/** The statics every shape sets from its texts (also for the shapes of one family, such as pam-command's). */
export function withText<
  C extends { summary?: string; description?: string; examples?: string[]; columns?: string[]; quietField?: string },
>(command: C, text: CommandText): C {
  return Object.assign(command, {
    summary: text.summary,
    examples: text.examples,
    ...(text.description === undefined ? {} : { description: text.description }),
    ...(text.columns === undefined ? {} : { columns: text.columns }),
    ...(text.quietField === undefined ? {} : { quietField: text.quietField }),
  });
}

/** `<topic> get <id>` (or another read of one resource): one GET by id; `pick` takes the result out of its
 * envelope. */
export function getCommand<E extends ByIdEndpoint>(
  def: ClientEndpoint<E>,
  what: string,
  text: CommandText & { pick?: (answer: CallResult<E>) => unknown },
) {
  const pick = text.pick ?? ((answer) => answer);
  class GetCommand extends ApiCommand<{ args: IdArgs }> {
    static override args = idArg(what);

    async run() {
      return pick(await this.call(def, requestOf<E>({ params: { id: this.args.id } })));
    }
  }
  return withText(GetCommand, text);
}

/** A change to one resource by id (delete, revoke, complete, test, sync): confirmation (or --yes) where a
 * `confirm` text is given, --dry-run, one call; `pick` shapes the answer. */
export function confirmCommand<E extends ByIdEndpoint>(
  def: ClientEndpoint<E>,
  what: string,
  text: CommandText & { confirm?: (id: string) => string; pick?: (answer: CallResult<E>, id: string) => unknown },
) {
  const pick = text.pick ?? ((answer) => answer);
  class ConfirmCommand extends ApiCommand<{ args: IdArgs; flags: typeof mutationFlags }> {
    static override args = idArg(what);
    static override flags = { ...mutationFlags };

    async run() {
      const { id } = this.args;
      if (text.confirm) await this.confirm(text.confirm(id));
      return pick(await this.call(def, requestOf<E>({ params: { id } })), id);
    }
  }
  return withText(ConfirmCommand, text);
}

/** `<topic> list`: the endpoint's query filters as flags (less `omit`, help from `descriptions` where the
 * contract's is not what a CLI user needs), with --limit, --page and --all; `items` finds the page in an answer
 * that does not put it in `data`. */
export function listCommand<E extends ByIdEndpoint & { params?: undefined }, I>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  text: CommandText &
    Parameters<typeof listFilterFlags<E>>[1] & {
      items?: (answer: CallResult<E>) => Page<I>;
    },
) {
  const { items } = text;
  const filters = listFilterFlags(def, { omit: text.omit, descriptions: text.descriptions });
  const flags = { ...filters.flags, ...listFlags };
  class ListCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      // The endpoint's filters less page and limit, which `list` sets: its list request by construction, which
      // the generic types cannot show (a list endpoint has no params or body: the constraint of E).
      const request = { query: this.queryFrom(filters) } as unknown as ListRequest<E>;
      return items ? this.list(def, request, items) : this.list(def, request);
    }
  }
  return withText(ListCommand, text);
}

/** `<topic> list` of an endpoint that answers in one piece (no paging flags): the query's fields as flags, one
 * call; `pick` takes the items out of their envelope. */
export function queryCommand<E extends ByIdEndpoint & { params?: undefined }>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  text: CommandText & { pick: (answer: CallResult<E>) => unknown },
) {
  const filters = queryFlags(def);
  const flags = { ...filters.flags };
  class QueryCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      // The endpoint has no params or body (the constraint of E): its query is the whole request.
      return text.pick(await this.call(def, requestOf<E>({ query: this.queryFrom(filters) } as never)));
    }
  }
  return withText(QueryCommand, text);
}

/** An endpoint whose body the command builds from flags (and --from-file). */
type BodyClientEndpoint<E extends EndpointDef> = ClientEndpoint<E> & { readonly body: readonly FieldDescriptor[] };
/** Help of body fields, where the contract's description is not what a CLI user needs. */
type BodyText<E extends EndpointDef> = { descriptions?: FieldOptions<BodyInput<E>, never>['descriptions'] };

/** `<topic> create`: the body's fields as flags, with --from-file, --idempotency-key and --dry-run. */
export function createCommand<E extends EndpointDef & { params?: undefined }>(
  def: BodyClientEndpoint<E>,
  text: CommandText & BodyText<E> & { pick?: (answer: CallResult<E>) => unknown },
) {
  const pick = text.pick ?? ((answer) => answer);
  const body = bodyFlags(def, { descriptions: text.descriptions });
  const flags = { ...body.flags, ...createFlags };
  class CreateCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      return pick(await this.call(def, requestOf<E>({ body: await this.bodyFrom(body) })));
    }
  }
  return withText(CreateCommand, text);
}

/** `<topic> update <id>`: the body's fields as flags (each optional), with --from-file and --dry-run;
 * `requireChange` refuses an empty change before anything is sent, `omit` leaves body fields out of the flags. */
export function updateCommand<E extends EndpointDef, const O extends KeysOf<BodyInput<E>> = never>(
  def: BodyClientEndpoint<E>,
  what: string,
  text: CommandText &
    BodyText<E> & { omit?: readonly O[]; requireChange?: boolean; pick?: (answer: CallResult<E>) => unknown },
) {
  const pick = text.pick ?? ((answer) => answer);
  const body = bodyFlags(def, { omit: text.omit, descriptions: text.descriptions });
  const flags = { ...body.flags, ...updateFlags };
  class UpdateCommand extends ApiCommand<{ args: IdArgs; flags: typeof flags }> {
    static override args = idArg(what);
    static override flags = flags;

    async run() {
      const patch = await this.bodyFrom(body);
      if (text.requireChange && Object.keys(patch).length === 0) throw new UsageError(NOTHING_TO_CHANGE);
      return pick(await this.call(def, requestOf<E>({ params: { id: this.args.id }, body: patch })));
    }
  }
  return withText(UpdateCommand, text);
}
