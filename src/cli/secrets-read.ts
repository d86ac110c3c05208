/**
 * The secrets this process was given: every value read by a `--…-stdin` flag, a credentials file or a password
 * prompt. What a dry run prints (`--dry-run`, CLI.md "Scripting conveniences": "body with secrets redacted")
 * hides these by value, wherever they land in a body and whatever the field is called (a chat webhook URL, a
 * PSA credential, a custom header's value), not only under names that look secret.
 */
const given = new Set<string>();

/** Remembers a secret, and every string inside one given as JSON (a credentials object); returns it. */
export function rememberSecret<T>(value: T): T {
  if (typeof value === 'string') {
    if (value !== '') given.add(value);
  } else if (value && typeof value === 'object') {
    for (const child of Object.values(value)) rememberSecret(child);
  }
  return value;
}

/** Whether this string is, or holds, a secret this process was given. */
export function holdsSecret(value: string): boolean {
  for (const secret of given) if (value.includes(secret)) return true;
  return false;
}
