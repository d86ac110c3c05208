import type { OutputFormat } from './output.js';

/**
 * Some answers are one object that holds a list (a review and its items, a role and its permissions). Row
 * formats (table, csv, jsonl) and `-q` show the list, one row per element; json and yaml print the API's
 * object as it is (CLI.md "Output": JSON is the API's objects).
 */
export function showsRows(format: OutputFormat, quiet: boolean): boolean {
  return quiet || format === 'table' || format === 'csv' || format === 'jsonl';
}
