import type { FastifyReply, FastifyRequest } from 'fastify';
import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import { unauthorized } from '../../errors.js';
import { publicUser } from './auth-service.js';
import { REGISTRATION_RECEIVED, type RegistrationKind } from './registration-service.js';
import type { IssuedTokens } from './sessions.js';

export const REFRESH_COOKIE = 'svc_refresh_token';
export const CSRF_HEADER = 'x-svc-csrf';
const COOKIE_PATH = '/api/v1/auth';

/** Sets the HTTP-only refresh cookie. */
export function setSessionCookies(reply: FastifyReply, tokens: IssuedTokens, maxAgeSeconds: number, secure: boolean): void {
  reply.setCookie(REFRESH_COOKIE, tokens.refreshToken, { path: COOKIE_PATH, sameSite: 'strict', secure, maxAge: maxAgeSeconds, httpOnly: true });
}

export function clearSessionCookies(reply: FastifyReply): void {
  reply.clearCookie(REFRESH_COOKIE, { path: COOKIE_PATH });
}

/** 01 §4.5: the refresh token from the body, or from the cookie with the x-svc-csrf header (any value, as the
 * mobile client of 02 §4.6 sends `1`). A page of another origin cannot send a custom header without a CORS
 * preflight, which this server never allows: the header's presence is the CSRF defence. */
function presentedRefreshToken(request: FastifyRequest, bodyToken: string | undefined): string {
  if (bodyToken) return bodyToken;
  const cookie = request.cookies[REFRESH_COOKIE];
  if (!cookie) throw unauthorized('Missing refresh token', 'INVALID_REFRESH_TOKEN');
  const header = request.headers[CSRF_HEADER];
  if (typeof header !== 'string' || header.trim() === '') {
    throw unauthorized('Missing x-svc-csrf header', 'CSRF_REQUIRED');
  }
  return cookie;
}

export function tokenBody(tokens: IssuedTokens) {
  return { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, expiresInSeconds: tokens.expiresInSeconds };
}

export function registerIdentityRoutes({ route, services, config, bearerToken, clientIp }: ModuleContext): void {
  const a = contract.auth;
  const { auth, mfa, account, registration, smsMfa: sms } = services;
  const cookies = (reply: FastifyReply, tokens: IssuedTokens) =>
    setSessionCookies(reply, tokens, config.tokens.refreshTtlSeconds, config.tokens.cookieSecure);
  // 01 §4.6, §5.8: the feature flag and the per-IP limit come first, before the body is parsed or validated, so
  // a disabled server answers REGISTRATION_DISABLED whatever was sent.
  const admitted = (kind: RegistrationKind) => ({
    onRequest: async (request: FastifyRequest) => registration.admit(kind, clientIp(request)),
  });

  route(a.login, async ({ ctx, body, reply }) => {
    const outcome = await auth.login(ctx, body.email, body.password);
    if (outcome.mfaRequired) return outcome;
    cookies(reply, outcome.tokens);
    return { mfaRequired: false as const, user: publicUser(outcome.user), tokens: tokenBody(outcome.tokens) };
  });

  route(a.refresh, async ({ ctx, body, request, reply }) => {
    const tokens = await auth.refresh(ctx, presentedRefreshToken(request, body.refreshToken));
    cookies(reply, tokens);
    return { tokens: tokenBody(tokens) };
  });

  route(a.logout, ({ ctx, reply }) => {
    auth.logout(ctx);
    clearSessionCookies(reply);
    return { success: true, message: 'Logged out' };
  });

  /** A registration's answer (01 §4.6): the new account and its session, the refresh token as a cookie only. */
  const registered = (reply: FastifyReply, user: { id: string; name: string; mfaEnabled: boolean }, tokens: IssuedTokens) => {
    cookies(reply, tokens);
    return {
      user: { id: user.id, name: user.name, mfaEnabled: user.mfaEnabled },
      tokens: { accessToken: tokens.accessToken, expiresInSeconds: tokens.expiresInSeconds },
      mfaRequired: false,
    };
  };

  route(
    a.register,
    async ({ ctx, body, reply }) => {
      const outcome = await registration.registerUser(ctx, body);
      return outcome.created ? registered(reply, outcome.user, outcome.tokens) : REGISTRATION_RECEIVED;
    },
    admitted('user'),
  );

  route(
    a.registerPartner,
    async ({ ctx, body, reply }) => {
      const outcome = await registration.registerPartner(ctx, body);
      if (!outcome.created) return REGISTRATION_RECEIVED;
      const { id, name, slug } = outcome.partner;
      return { ...registered(reply, outcome.user, outcome.tokens), partner: { id, name, slug } };
    },
    admitted('partner'),
  );

  route(a.mfaSetup, ({ ctx, body }) => mfa.setup(ctx, body.currentPassword));

  route(a.mfaEnable, async ({ ctx, body, reply }) => {
    const { user, tokens } = await mfa.enable(ctx, body.code, body.currentPassword);
    cookies(reply, tokens);
    return { success: true as const, user: publicUser(user), tokens: tokenBody(tokens) };
  });

  route(a.mfaVerify, async ({ ctx, body, request, reply }) => {
    const { user, tokens } = await mfa.verify(ctx, body.code, body.tempToken, bearerToken(request));
    cookies(reply, tokens);
    return { user: publicUser(user), tokens: tokenBody(tokens) };
  });

  route(a.mfaDisable, ({ ctx, body }) => {
    mfa.disable(ctx, body.code);
    return { success: true, message: 'MFA disabled' };
  });

  route(a.mfaRecoveryCodes, ({ ctx }) => ({ recoveryCodes: mfa.regenerateRecoveryCodes(ctx) }));

  route(a.changePassword, async ({ ctx, body, reply }) => {
    await auth.changePassword(ctx, body.currentPassword, body.newPassword);
    clearSessionCookies(reply);
    return { success: true, message: 'Password changed; every session has ended, sign in again' };
  });

  route(a.getMe, ({ ctx }) => auth.me(ctx));
  route(a.me, ({ ctx }) => ({ user: auth.me(ctx) }));
  route(a.updateMe, ({ ctx, body }) => auth.updateMe(ctx, body));

  // ---- invitations, password reset, phone and SMS MFA (01 §4.4, §4.5) ----
  const acc = contract.account;

  route(acc.acceptInvite, async ({ ctx, body, reply }) => {
    const { user, tokens } = await account.acceptInvite(ctx, body.token, body.password, body.name);
    cookies(reply, tokens);
    return { user: publicUser(user), tokens: tokenBody(tokens) };
  });

  route(acc.forgotPassword, ({ ctx, body }) => account.forgotPassword(ctx, body.email));

  route(acc.resetPassword, async ({ ctx, body, reply }) => {
    await account.resetPassword(ctx, body.token, body.password);
    clearSessionCookies(reply);
    return { success: true, message: 'Password reset; every session has ended, sign in with the new password' };
  });

  route(acc.phoneVerify, ({ ctx, body }) => sms.verifyPhone(ctx, body.phoneNumber));
  route(acc.phoneConfirm, ({ ctx, body }) => sms.confirmPhone(ctx, body.code));
  route(acc.mfaSmsSend, ({ body, request }) => sms.sendLoginCode(body.tempToken, bearerToken(request)));
  route(acc.mfaSmsEnable, ({ ctx }) => sms.enableSmsMfa(ctx));
}
