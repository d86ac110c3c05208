import type { EndpointDef, RequestOf } from '../contract/endpoint.js';
import type { ClientEndpoint, FieldDescriptor } from '../contract/projection.js';
import type { CallResult } from '../client/contract-client.js';
import { ApiCommand, createFlags, listFlags, mutationFlags, unkeyedCreateFlags, updateFlags, type ItemOf, type ListRequest } from './api-command.js';
import { idArg } from './args.js';
import { Args } from './flags.js';
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

/** What a command's positional arguments address: one resource (`Group` → `<id>`, "Group id"), or each path
 * parameter by name with its help (`{ id: 'Group id', deviceId: 'Device id' }`), in path order. */
export type Addressed = string | Readonly<Record<string, string>>;

/** The positional arguments of an `Addressed`. */
export function addressArgs(what: Addressed): IdArgs {
  if (typeof what === 'string') return idArg(what);
  // Each path parameter is a required argument; `id` is among them for every endpoint these factories serve.
  return Object.fromEntries(Object.entries(what).map(([name, description]) => [name, Args.string({ required: true, description })])) as IdArgs;
}

/** The path parameters of an `Addressed` from the parsed arguments. */
function paramsOf(what: Addressed, args: Record<string, string>): Record<string, string> {
  return typeof what === 'string' ? { id: args.id ?? '' } : Object.fromEntries(Object.keys(what).map((name) => [name, args[name] ?? '']));
}

/** A request of the factories' endpoints: `{params: {id}}` for one addressed by id, `{body}` for one with a body.
 * The constraints of each factory keep every such endpoint's request of this shape, which the generic type
 * cannot show by itself. */
export function requestOf<E extends EndpointDef>(request: { params?: Record<string, string>; body?: unknown; query?: unknown }): RequestOf<E> {
  return request as RequestOf<E>;
}

/** The answer as it is: the `pick` of a factory given none, where R is left at its default, the answer's type. */
export function asIs<A, R>(answer: A): R {
  return answer as unknown as R;
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
export function getCommand<E extends ByIdEndpoint, R = CallResult<E>>(
  def: ClientEndpoint<E>,
  what: string,
  text: CommandText & { pick?: (answer: CallResult<E>) => R },
) {
  const pick = text.pick ?? asIs<CallResult<E>, R>;
  class GetCommand extends ApiCommand<{ args: IdArgs }> {
    static override args = idArg(what);

    async run() {
      return pick(await this.call(def, requestOf<E>({ params: { id: this.args.id } })));
    }
  }
  return withText(GetCommand, text);
}

/** A change to one resource by id (delete, revoke, complete, test, sync), or by several path parameters (pin a
 * device into a group): confirmation (or --yes) where a `confirm` text is given, --dry-run, one call; `pick`
 * shapes the answer. */
export function confirmCommand<E extends ByIdEndpoint, R = CallResult<E>>(
  def: ClientEndpoint<E>,
  what: Addressed,
  text: CommandText & { confirm?: (id: string) => string; pick?: (answer: CallResult<E>, id: string) => R },
) {
  const pick = text.pick ?? asIs<CallResult<E>, R>;
  class ConfirmCommand extends ApiCommand<{ args: IdArgs; flags: typeof mutationFlags }> {
    static override args = addressArgs(what);
    static override flags = { ...mutationFlags };

    async run() {
      const { id } = this.args;
      if (text.confirm) await this.confirm(text.confirm(id));
      return pick(await this.call(def, requestOf<E>({ params: paramsOf(what, this.args) })), id);
    }
  }
  return withText(ConfirmCommand, text);
}

/** `<topic> list`: the endpoint's query filters as flags (less `omit`, help from `descriptions` where the
 * contract's is not what a CLI user needs), with --limit, --page and --all; `items` finds the page in an answer
 * that does not put it in `data`. */
export function listCommand<E extends ByIdEndpoint & { params?: undefined }, I = ItemOf<E>>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  text: ListText<E, I>,
) {
  return pagedListCommand(def, undefined, text);
}

/** `<topic> <children> <id>`: the paged list that belongs to one resource (a script's runs, a webhook's
 * deliveries), its filters as flags like `list`'s. */
export function childListCommand<E extends ByIdEndpoint, I = ItemOf<E>>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  what: string,
  text: ListText<E, I>,
) {
  return pagedListCommand(def, what, text);
}

type ListText<E extends EndpointDef, I> = CommandText &
  Parameters<typeof listFilterFlags<E>>[1] & {
    items?: (answer: CallResult<E>) => Page<I>;
  };

/** The positional `<id>` of a command addressed by one (none where `what` is undefined). */
function withIdArg<C extends object>(command: C, what: string | undefined): C {
  return what === undefined ? command : Object.assign(command, { args: idArg(what) });
}

function pagedListCommand<E extends ByIdEndpoint, I>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  what: string | undefined,
  text: ListText<E, I>,
) {
  const { items } = text;
  const filters = listFilterFlags(def, { omit: text.omit, descriptions: text.descriptions });
  const flags = { ...filters.flags, ...listFlags };
  class ListCommand extends ApiCommand<{ args: IdArgs; flags: typeof flags }> {
    static override flags = flags;

    async run() {
      // The endpoint's filters less page and limit, which `list` sets (and the parent's id): its list request by
      // construction, which the generic types cannot show (a list endpoint has no body: the constraint of E).
      const params = what === undefined ? {} : { params: { id: this.args.id } };
      const request = { ...params, query: this.queryFrom(filters) } as unknown as ListRequest<E>;
      return items ? this.list(def, request, items) : this.list(def, request);
    }
  }
  return withText(withIdArg(ListCommand, what), text);
}

/** `<topic> list` of an endpoint that answers in one piece (no paging flags): the query's fields as flags, one
 * call; `pick` takes the items out of their envelope (or shapes them for the output format). */
export function queryCommand<E extends ByIdEndpoint & { params?: undefined }, R>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  text: CommandText & { pick: (answer: CallResult<E>, format: string) => R },
) {
  const filters = queryFlags(def);
  const flags = { ...filters.flags };
  class QueryCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      // The endpoint has no params or body (the constraint of E): its query is the whole request.
      return text.pick(await this.call(def, requestOf<E>({ query: this.queryFrom(filters) })), this.format);
    }
  }
  return withText(QueryCommand, text);
}

/** A summary of counts (`alerts summary`, `mobile summary`): the answer as it is, but in a table (or CSV) one row
 * per count, `{group, name, count}`, from the groups of counts `groups` finds in the answer. */
export function countsCommand<E extends ByIdEndpoint & { params?: undefined }>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  text: CommandText & { groups: (answer: CallResult<E>) => Record<string, Readonly<Record<string, number>>> },
) {
  return queryCommand(def, {
    ...text,
    pick: (answer, format) =>
      format !== 'table' && format !== 'csv'
        ? answer
        : Object.entries(text.groups(answer)).flatMap(([group, counts]) => Object.entries(counts).map(([name, count]) => ({ group, name, count }))),
  });
}

/** An endpoint whose body the command builds from flags (and --from-file). */
type BodyClientEndpoint<E extends EndpointDef> = ClientEndpoint<E> & { readonly body: readonly FieldDescriptor[] };
/** Help of body fields, where the contract's description is not what a CLI user needs. */
type BodyText<E extends EndpointDef> = { descriptions?: FieldOptions<BodyInput<E>, never>['descriptions'] };

/** `<topic> create`: the body's fields as flags, with --from-file, --dry-run and, where the endpoint replays a
 * repeated key, --idempotency-key (a flag the server would ignore is not offered). */
export function createCommand<E extends EndpointDef & { params?: undefined }, R = CallResult<E>>(
  def: BodyClientEndpoint<E>,
  text: CommandText & BodyText<E> & { pick?: (answer: CallResult<E>) => R },
) {
  const pick = text.pick ?? asIs<CallResult<E>, R>;
  const body = bodyFlags(def, { descriptions: text.descriptions });
  const flags = { ...body.flags, ...(def.idempotent ? createFlags : unkeyedCreateFlags) };
  class CreateCommand extends ApiCommand<{ flags: typeof flags }> {
    static override flags = flags;

    async run() {
      return pick(await this.call(def, requestOf<E>({ body: await this.bodyFrom(body) })));
    }
  }
  return withText(CreateCommand, text);
}

/** A command whose body is built from flags (and --from-file unless `fromFile` is false), sent to one resource
 * by id (`what`) or to an endpoint with no path parameter (the caller's own resource, an analysis):
 * `update <id>`, `toggle <id>`, `users me update`. `requireChange` refuses an empty body before anything is sent
 * (a string: with that message), `omit` leaves body fields out of the flags. */
export function bodyCommand<E extends EndpointDef, const O extends KeysOf<BodyInput<E>> = never, R = CallResult<E>>(
  def: BodyClientEndpoint<E>,
  text: CommandText &
    BodyText<E> & {
      what?: string;
      fromFile?: boolean;
      omit?: readonly O[];
      requireChange?: boolean | string;
      pick?: (answer: CallResult<E>) => R;
    },
) {
  const { what, requireChange } = text;
  const pick = text.pick ?? asIs<CallResult<E>, R>;
  const body = bodyFlags(def, { omit: text.omit, descriptions: text.descriptions });
  const flags = { ...body.flags, ...(text.fromFile === false ? mutationFlags : updateFlags) };
  class BodyCommand extends ApiCommand<{ args: IdArgs; flags: typeof flags }> {
    static override flags = flags;

    async run() {
      const patch = await this.bodyFrom(body);
      if (requireChange && Object.keys(patch).length === 0) throw new UsageError(requireChange === true ? NOTHING_TO_CHANGE : requireChange);
      const params = what === undefined ? {} : { params: { id: this.args.id } };
      return pick(await this.call(def, requestOf<E>({ ...params, body: patch })));
    }
  }
  return withText(withIdArg(BodyCommand, what), text);
}

/** `<topic> update <id>`: the body's fields as flags (each optional), with --from-file and --dry-run (see
 * `bodyCommand`). */
export function updateCommand<E extends EndpointDef, const O extends KeysOf<BodyInput<E>> = never, R = CallResult<E>>(
  def: BodyClientEndpoint<E>,
  what: string,
  text: Omit<Parameters<typeof bodyCommand<E, O, R>>[1], 'what'>,
) {
  return bodyCommand<E, O, R>(def, { ...text, what });
}
