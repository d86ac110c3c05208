import { errorCodes } from 'fastify';
import { fullPath } from '../../../contract/endpoint.js';
import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { SSO_STATE_TTL_MS } from './login-service.js';

/** The cookie that ties an OIDC sign-in to the browser that started it (login-service.ts `callback`). */
const BROWSER_COOKIE = 'svc_sso_browser';

export function registerSsoRoutes({ app, config, route, services }: ModuleContext): void {
  const c = contract.sso;
  const callbackPath = fullPath(c.callback);
  const providers = services.sso;
  const login = services.ssoLogin;
  route(c.presets, () => providers.presets());
  route(c.listProviders, ({ ctx, query }) => providers.list(ctx, query));
  route(c.getProvider, ({ ctx, params }) => providers.get(ctx, params.id));
  route(c.createProvider, ({ ctx, body }) => providers.create(ctx, body));
  route(c.updateProvider, ({ ctx, params, body }) => providers.update(ctx, params.id, body));
  route(c.deleteProvider, ({ ctx, params }) => providers.delete(ctx, params.id));
  route(c.testProvider, ({ ctx, params }) => providers.test(ctx, params.id));
  route(c.setProviderStatus, ({ ctx, params, body }) => providers.setStatus(ctx, params.id, body.status));
  route(c.check, ({ params }) => providers.check(params.orgId));
  route(c.login, async ({ ctx, params, query, reply }) => {
    const { url, browserBinding } = await login.begin(ctx, params.orgId, query);
    // Lax: the provider's redirect back to the callback is a top-level GET, which carries it.
    if (browserBinding !== null) {
      reply.setCookie(BROWSER_COOKIE, browserBinding, { path: callbackPath, httpOnly: true, sameSite: 'lax', secure: config.tokens.cookieSecure, maxAge: SSO_STATE_TTL_MS / 1000 });
    }
    await reply.header('cache-control', 'no-store').redirect(url, 302);
    return undefined;
  });
  route(c.callback, async ({ ctx, query, request, reply }) => {
    reply.clearCookie(BROWSER_COOKIE, { path: callbackPath });
    const url = await login.callback(ctx, query, request.cookies[BROWSER_COOKIE]);
    await reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(url, 302);
    return undefined;
  });
  route(c.exchange, ({ ctx, body }) => login.exchange(ctx, body));
  route(c.samlMetadata, async ({ reply }) => {
    await reply.type('application/samlmetadata+xml; charset=utf-8').send(await login.samlMetadata());
    return undefined;
  });
  // The identity provider's HTTP-POST binding is a form post from the browser. The form parser takes that
  // content type on this route only (a pattern, so the web pages' own form parser in their scope is untouched);
  // every other route keeps answering 415 to form bodies.
  const acsPath = fullPath(c.samlAcs);
  app.addContentTypeParser(/^application\/x-www-form-urlencoded\s*(;|$)/i, { parseAs: 'string' }, (request, body, done) => {
    if (request.routeOptions.url !== acsPath) {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(String(request.headers['content-type'])), undefined);
      return;
    }
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
  route(c.samlAcs, async ({ ctx, body, reply }) => {
    const url = await login.samlAcs(ctx, body);
    await reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(url, 302);
    return undefined;
  });
}
