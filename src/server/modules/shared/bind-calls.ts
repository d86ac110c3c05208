import type { z } from 'zod';
import type { BodyOf, EndpointDef, ParamsOf, QueryOf, ResponseOf } from '../../../contract/endpoint.js';
import type { ModuleContext } from '../../app-context.js';
import type { RequestContext } from '../../context.js';

type Route = ModuleContext['route'];
type Answer<E extends EndpointDef> = ResponseOf<E> | undefined | Promise<ResponseOf<E> | undefined>;
type IdArg<E extends EndpointDef> = E['params'] extends z.ZodType
  ? [id: ParamsOf<E> extends { id: infer I } ? I : never]
  : [];
type QueryArg<E extends EndpointDef> = E['query'] extends z.ZodType ? [query: QueryOf<E>] : [];
type BodyArg<E extends EndpointDef> = E['body'] extends z.ZodType ? [body: BodyOf<E>] : [];

/** The service method an endpoint of the usual shape calls: the caller's context, then the `:id` parameter
 * (when the path has one), the parsed query (when declared), the parsed body (when declared). */
export type CallOf<E extends EndpointDef> = (
  ctx: RequestContext,
  ...args: [...IdArg<E>, ...QueryArg<E>, ...BodyArg<E>]
) => Answer<E>;

/** Binds each named endpoint of a contract group to the service method of the same name, called as `CallOf`
 * says; endpoints of another shape (other parameters, a renamed method) are bound one by one beside it. */
export function bindCalls<C extends Record<string, EndpointDef>, K extends keyof C & string>(
  route: Route,
  endpoints: C,
  service: NoInfer<{ [P in K]: CallOf<C[P]> }>,
  names: readonly K[],
): void {
  for (const name of names) {
    const def = endpoints[name] as EndpointDef;
    const call = service[name] as (ctx: RequestContext, ...args: unknown[]) => Answer<EndpointDef>;
    route(def, ({ ctx, params, query, body }) => {
      const args: unknown[] = [];
      if (def.params) args.push((params as { id: unknown }).id);
      if (def.query) args.push(query);
      if (def.body) args.push(body);
      return call.call(service, ctx, ...args);
    });
  }
}
