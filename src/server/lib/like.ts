/** SQL LIKE patterns, every one used with `ESCAPE '\'`. */

/** `text` with `%`, `_` and the escape character itself matched literally. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A pattern that matches any value containing `text` (a search box). */
export function containsPattern(text: string): string {
  return `%${likeEscape(text)}%`;
}
