// The text of a plain value, shared by the CLI's table cells (src/cli/output.ts) and the client's query strings
// (src/client/http.ts). It imports nothing, so either side may use it.

/** Text as it is, numbers, booleans and bigints as written, a date in ISO 8601; undefined for anything else (null,
 * objects, arrays), which each caller writes its own way. */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return value instanceof Date ? value.toISOString() : undefined;
}
