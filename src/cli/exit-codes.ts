/** The exit-code table of CLI.md "Errors and exit codes". */
export const ExitCode = {
  SUCCESS: 0,
  UNEXPECTED: 1,
  USAGE: 2,
  AUTH: 3,
  FORBIDDEN: 4,
  NOT_FOUND: 5,
  CONFLICT: 6,
  RATE_LIMITED: 7,
  SERVER: 8,
  INCOMPLETE: 9,
  /** Ctrl-C at a prompt or during work (128 + SIGINT, as shells report it). */
  INTERRUPTED: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Maps an HTTP response to an exit code. A 400 is a business-rule refusal (exit 6, "such as a completed
 * review") unless the server says the input itself was invalid (VALIDATION_ERROR, exit 2).
 */
export function exitCodeForStatus(status: number, code?: string): ExitCode {
  if (status === 207) return ExitCode.INCOMPLETE;
  if (status >= 200 && status < 400) return ExitCode.SUCCESS;
  switch (status) {
    case 400:
      return code === 'VALIDATION_ERROR' ? ExitCode.USAGE : ExitCode.CONFLICT;
    case 401:
      return ExitCode.AUTH;
    case 403:
      return ExitCode.FORBIDDEN;
    case 404:
      return ExitCode.NOT_FOUND;
    case 409:
    case 422:
      return ExitCode.CONFLICT;
    case 429:
      return ExitCode.RATE_LIMITED;
  }
  if (status >= 500) return ExitCode.SERVER;
  if (status >= 400) return ExitCode.USAGE;
  return ExitCode.UNEXPECTED;
}

/** What decides which next action helps: where the credentials came from and how the command was run. */
export interface HintContext {
  /** The environment variable that supplied the credentials (`svc login` would not change them). */
  credentialsFrom?: 'SVC_API_KEY' | 'SVC_TOKEN' | undefined;
  /** The profile given with --profile or SVC_PROFILE, repeated in the suggested command. */
  profile?: string | undefined;
  /** The command is `svc login` itself: suggesting it again helps nobody. */
  signingIn?: boolean | undefined;
  /** The refused request was sent with an API key (issue 15 item 6). */
  apiKey?: boolean | undefined;
}

/** A 401 to an API key: the key may be fine and the route closed to keys (a hosted release takes them on a few). */
export const API_KEY_ROUTE_HINT =
  'An API key was sent: check that it is active, and note that the deployment may not accept API keys on this route (some hosted releases take them on a few routes only). Signing in with a password (`svc login --email …`) works on every route.';

/** The suggested next action printed under an error, where one helps. */
export function hintFor(status: number, code?: string, context: HintContext = {}): string | undefined {
  if (status === 401) {
    // Credentials from the environment: `svc login` would not change what is sent, so the variable is named.
    if (context.credentialsFrom) {
      const fix = `The credentials come from ${context.credentialsFrom}: set a valid one, or unset it to use a saved profile.`;
      return context.apiKey ? `${fix} Or the deployment may not accept API keys on this route (some hosted releases take them on a few routes only).` : fix;
    }
    if (context.apiKey) return API_KEY_ROUTE_HINT;
    if (context.signingIn) return undefined;
    return `Try this: svc login${context.profile ? ` --profile ${context.profile}` : ''}`;
  }
  if (status === 403 && code === 'MFA_REQUIRED')
    return 'Try this: enable MFA with `svc mfa setup`, then `svc mfa enable --code CODE` (the profile keeps the new session)';
  if (status === 403 && code === 'PARTNER_INACTIVE') return 'the partner account is not active';
  return undefined;
}
