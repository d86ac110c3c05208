import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { contract } from '../../../contract/index.js';
import type { ModuleContext } from '../../app-context.js';
import type { RequestContext } from '../../context.js';
import { DomainError } from '../../errors.js';
import type { UserTokenPurpose } from '../identity/user-tokens.js';
import { PAGE_HEADERS, doneBox, errorBox, escapeHtml, form, page, type FormField } from './html.js';

/** Form posts are a few short fields; anything larger is not from these pages. */
const FORM_BODY_LIMIT = 16 * 1024;

const PASSWORD_FIELDS: readonly FormField[] = [
  { name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', required: true },
  { name: 'confirm', label: 'New password again', type: 'password', autocomplete: 'new-password', required: true },
];

type Fields = Record<string, string>;

/** One page: what it is called, which token it takes, its form, and the service call that does the work. */
interface PageSpec {
  path: 'accept-invite' | 'reset-password';
  purpose: UserTokenPurpose;
  title: string;
  /** What to do when the link cannot be used. */
  deadLinkHint: string;
  fields: (values: Fields) => FormField[];
  submit: string;
  /** The API's body schema: the page accepts exactly what the API accepts. */
  body: z.ZodType;
  /** Does the work through the same service method as the API, with the body as the API's schema parsed it;
   * returns the success page's HTML. */
  complete(ctx: RequestContext, body: Fields): Promise<string>;
}

/** A form field's string value (absent, repeated or non-string fields count as empty). */
function field(source: unknown, name: string): string {
  if (typeof source !== 'object' || source === null) return '';
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : '';
}

/**
 * The pages behind the links the server sends (01 §4.4 invitations, §4.5 password reset): GET shows a form,
 * POST (to the same path) does the work. Server-rendered, no JavaScript, no external asset; the rules stay in
 * the identity services, and their errors are shown on the page. Not API endpoints, so not in the contract.
 */
export function registerWebPages({ app, services, anonymousContext }: ModuleContext): void {
  const { account } = services;

  const pages: PageSpec[] = [
    {
      path: 'accept-invite',
      purpose: 'invite',
      title: 'Accept your invitation',
      deadLinkHint: 'Ask whoever invited you for a new invitation.',
      fields: (values) => [
        { name: 'name', label: 'Your name (optional)', type: 'text', autocomplete: 'name', required: false, value: values.name ?? '' },
        ...PASSWORD_FIELDS,
      ],
      submit: 'Set password and activate',
      body: contract.account.acceptInvite.body,
      async complete(ctx, body) {
        const user = await account.activateInvitation(ctx, body.token ?? '', body.password ?? '', body.name);
        return `${doneBox(`Your account ${user.email} is active.`)}
<p>Sign in with your e-mail address and the new password, e.g. <code>svc login --email ${escapeHtml(user.email)}</code>.</p>`;
      },
    },
    {
      path: 'reset-password',
      purpose: 'password_reset',
      title: 'Choose a new password',
      deadLinkHint: 'Ask for a new link with svc login forgot-password, or ask an administrator.',
      fields: () => [...PASSWORD_FIELDS],
      submit: 'Set the new password',
      body: contract.account.resetPassword.body,
      async complete(ctx, body) {
        await account.resetPassword(ctx, body.token ?? '', body.password ?? '');
        return `${doneBox('Your password has been changed.')}
<p>Every session of the account has ended: sign in again with the new password.</p>`;
      },
    },
  ];

  const send = (reply: FastifyReply, status: number, title: string, body: string) =>
    reply.code(status).headers(PAGE_HEADERS).send(page(title, body));

  const showForm = (reply: FastifyReply, spec: PageSpec, status: number, token: string, values: Fields, error?: string) =>
    send(reply, status, spec.title, `${error ? errorBox(error) : ''}\n${form(spec.path, token, spec.fields(values), spec.submit)}`);

  const showDeadLink = (reply: FastifyReply, spec: PageSpec, message: string) =>
    send(reply, 400, spec.title, `${errorBox(message)}\n<p>${escapeHtml(spec.deadLinkHint)}</p>`);

  /** The service's client-fault errors are shown on the page (status 400); anything else is the error handler's. */
  const asClientError = (err: unknown): DomainError => {
    if (err instanceof DomainError && err.isClientFault) return err;
    throw err;
  };

  const isLinkError = (err: DomainError) => err.code === 'INVALID_INVITE_TOKEN' || err.code === 'INVALID_RESET_TOKEN';

  async function show(spec: PageSpec, request: FastifyRequest, reply: FastifyReply) {
    const token = field(request.query, 'token');
    try {
      account.checkLink(spec.purpose, token);
    } catch (err) {
      return showDeadLink(reply, spec, asClientError(err).message);
    }
    return showForm(reply, spec, 200, token, {});
  }

  async function submit(spec: PageSpec, request: FastifyRequest, reply: FastifyReply) {
    const values: Fields = {};
    for (const name of ['token', 'password', 'confirm', 'name']) values[name] = field(request.body, name);
    const token = values.token ?? '';
    const apiBody = Object.fromEntries(Object.entries(values).filter(([k, v]) => k !== 'confirm' && v !== ''));
    const parsed = spec.body.safeParse(apiBody);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = String(issue?.path[0] ?? '');
      if (where === 'token') return showDeadLink(reply, spec, 'This link is incomplete: open the whole link you were sent.');
      return showForm(reply, spec, 400, token, values, `${where === 'password' ? 'Password' : 'Name'}: ${issue?.message ?? 'invalid'}`);
    }
    try {
      account.checkLink(spec.purpose, token);
      if (values.password !== values.confirm) return showForm(reply, spec, 400, token, values, 'The two passwords do not match.');
      const body = parsed.data as Fields;
      return send(reply, 200, spec.title, await spec.complete(anonymousContext(request), body));
    } catch (err) {
      const clientError = asClientError(err);
      if (isLinkError(clientError)) return showDeadLink(reply, spec, clientError.message);
      return showForm(reply, spec, 400, token, values, clientError.message);
    }
  }

  // Own scope: the form body parser serves these pages only; the API keeps answering 415 to form bodies.
  void app.register(async (scope: FastifyInstance) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    for (const spec of pages) {
      scope.get(`/${spec.path}`, (request, reply) => show(spec, request, reply));
      scope.post(`/${spec.path}`, { bodyLimit: FORM_BODY_LIMIT }, (request, reply) => submit(spec, request, reply));
    }
  });
}
