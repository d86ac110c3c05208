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

/** The suggested next action printed under an error, where one helps. */
export function hintFor(status: number, code?: string): string | undefined {
  if (status === 401) return 'Try this: svc login';
  if (status === 403 && code === 'MFA_REQUIRED')
    return 'Try this: enable MFA with `svc mfa setup`, then `svc mfa enable --code CODE` (the profile keeps the new session)';
  if (status === 403 && code === 'PARTNER_INACTIVE') return 'the partner account is not active';
  return undefined;
}
