import { createRequire } from 'node:module';
import { styleText } from 'node:util';
import { csvFormatRows } from 'd3-dsv';
import type CliTable from 'cli-table3';
import type * as Yaml from 'yaml';
import { csvCell } from '../lib/csv-cell.js';
import { scalarText } from '../lib/scalar-text.js';
import { UsageError } from './prompts.js';

/**
 * Renderers for `--output table|json|jsonl|csv|yaml` (CLI.md "Output"). Everything returned here is stdout data.
 *
 * `columns` (dot paths such as `partner.name` allowed) picks and orders fields in every format: without it
 * json, jsonl and yaml print the resource objects exactly as the API returned them; with it each object is
 * projected to a flat object keyed by the column names as given, which is also what the csv header shows.
 */
export const OUTPUT_FORMATS = ['table', 'json', 'jsonl', 'csv', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface RenderOptions {
  format: OutputFormat;
  columns?: string[];
  /** The columns come from `--columns` (checked against the rows), not a command's defaults. */
  userColumns?: boolean;
  /** Drops the header row of table and csv. */
  noHeaders?: boolean;
  /** Prints `item[quietField]` one per line instead of the format. */
  quiet?: boolean;
  /** Default `id`. */
  quietField?: string;
  color?: boolean;
}

// The table and yaml formatters are CommonJS packages loaded on first use, so `-o json` never pays for them
// (the csv one, d3-dsv, is a few functions).
const require = createRequire(import.meta.url);
const loadTable = () => require('cli-table3') as typeof CliTable;
const loadYaml = () => require('yaml') as typeof Yaml;

type Row = Record<string, unknown>;

const TABLE_CELL_MAX = 40;
const COLUMN_SCAN_ROWS = 100;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

function isRecord(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNested(value: unknown): boolean {
  return typeof value === 'object' && value !== null;
}

/** A list renders element by element; anything else is one item. */
function toItems(data: unknown): unknown[] {
  if (data === undefined) return [];
  return Array.isArray(data) ? data : [data];
}

/** Reads `a.b.c`, preferring a literal key that contains the dots. */
export function getPath(item: unknown, path: string): unknown {
  if (!isRecord(item)) return undefined;
  if (Object.hasOwn(item, path)) return item[path];
  let current: unknown = item;
  for (const part of path.split('.')) {
    if (!isRecord(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

/** Rows for columnar formats; a bare scalar becomes `{ value }`. */
function toRow(item: unknown): Row {
  return isRecord(item) ? item : { value: item };
}

function project(item: unknown, columns: string[]): Row {
  return Object.fromEntries(columns.map((column) => [column, getPath(item, column)]));
}

/** Union of the keys of the first rows, in order of first appearance; nested fields only when asked for. */
function inferColumns(rows: Row[], includeNested: boolean): string[] {
  // key → whether its first non-null value is an object or array (undefined while only nulls were seen)
  const nestedByKey = new Map<string, boolean | undefined>();
  for (const row of rows.slice(0, COLUMN_SCAN_ROWS)) {
    for (const [key, value] of Object.entries(row)) {
      if (value === null || value === undefined) {
        if (!nestedByKey.has(key)) nestedByKey.set(key, undefined);
      } else if (nestedByKey.get(key) === undefined) {
        nestedByKey.set(key, isNested(value));
      }
    }
  }
  return [...nestedByKey].filter(([, nested]) => includeNested || nested !== true).map(([key]) => key);
}

/** Compact JSON of one value; `undefined` (not JSON) prints as null. */
function jsonText(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** A value as cell text: null and undefined empty, objects and arrays as compact JSON. */
function cellText(value: unknown): string {
  return scalarText(value) ?? (typeof value === 'object' && value !== null ? JSON.stringify(value) : '');
}

function tableCell(value: unknown): string {
  const text = cellText(value);
  if (isNested(value) && !(value instanceof Date)) {
    return text.length > TABLE_CELL_MAX ? `${text.slice(0, TABLE_CELL_MAX - 1)}…` : text;
  }
  if (ISO_TIMESTAMP.test(text)) return `${text.slice(0, 10)} ${text.slice(11, 16)}`;
  // One line per row keeps tables greppable.
  return text.replace(/\s*\r?\n\s*/g, ' ');
}

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}

function renderQuiet(data: unknown, field: string): string {
  const lines: string[] = [];
  for (const item of toItems(data)) {
    const value = isRecord(item) ? getPath(item, field) : item;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== undefined && v !== null) lines.push(cellText(v));
    }
  }
  return lines.map((line) => `${line}\n`).join('');
}

/** RFC 4180 (d3-dsv, as the server's exports), `\n` line ends. */
function renderCsvLines(rows: string[][]): string {
  return rows.length === 0 ? '' : `${csvFormatRows(rows)}\n`;
}

/** Cells by the server's export rule (src/lib/csv-cell.ts): a formula never reaches a spreadsheet as one. */
function csvRows(items: unknown[], columns: string[]): string[][] {
  return items.map((item) => columns.map((column) => csvCell(getPath(toRow(item), column))));
}

/**
 * `--columns` names fields of the rows: a column whose first part is a field of no row is a typo, refused with
 * the fields there are. Without rows nothing can be checked.
 */
export function checkColumns(items: readonly unknown[], columns: readonly string[] | undefined): void {
  if (columns === undefined || items.length === 0) return;
  const known = new Set(items.flatMap((item) => Object.keys(toRow(item))));
  const exists = (column: string) => known.has(column) || known.has(column.split('.')[0] ?? column);
  const unknown = columns.filter((column) => !exists(column));
  if (unknown.length > 0)
    throw new UsageError(
      `Unknown column${unknown.length === 1 ? '' : 's'} ${unknown.map((c) => `"${c}"`).join(', ')} for --columns; valid columns: ${[...known].join(', ')}`,
      '--columns',
    );
}

function renderTable(data: unknown, opts: RenderOptions): string {
  const Table = loadTable();
  // A borderless, kubectl-like layout with bold headers on a colour terminal (node's own styleText, which is
  // free to load); `color: false` means no escapes at all.
  const bold = (text: string) => (opts.color === true ? styleText('bold', text, { validateStream: false }) : text);
  const table = (head: string[]) =>
    new Table({
      head,
      chars: {
        top: '',
        'top-mid': '',
        'top-left': '',
        'top-right': '',
        bottom: '',
        'bottom-mid': '',
        'bottom-left': '',
        'bottom-right': '',
        left: '',
        'left-mid': '',
        mid: '',
        'mid-mid': '',
        right: '',
        'right-mid': '',
        middle: '  ',
      },
      style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
    });
  const finish = (t: { toString(): string }) =>
    withNewline(
      t
        .toString()
        .split('\n')
        .map((line) => line.trimEnd())
        .join('\n'),
    );

  if (isRecord(data)) {
    // One object: a key/value table, nested values included (shortened).
    const keys = opts.columns ?? Object.keys(data);
    const t = table([]);
    for (const key of keys) t.push([bold(key), tableCell(getPath(data, key))]);
    return keys.length === 0 ? '' : finish(t);
  }
  const rows = toItems(data).map(toRow);
  if (rows.length === 0) return '';
  const columns = opts.columns ?? inferColumns(rows, false);
  const t = table(opts.noHeaders === true ? [] : columns.map((c) => bold(c)));
  for (const row of rows) t.push(columns.map((column) => tableCell(getPath(row, column))));
  return finish(t);
}

/** The full stdout text for `data`, ending with a newline unless empty. */
export function render(data: unknown, opts: RenderOptions): string {
  if (opts.quiet === true) return renderQuiet(data, opts.quietField ?? 'id');
  const { columns } = opts;
  if (opts.userColumns === true) checkColumns(toItems(data), columns);
  const shaped = (value: unknown) =>
    columns === undefined
      ? value
      : Array.isArray(value)
        ? value.map((v) => project(v, columns))
        : project(value, columns);

  switch (opts.format) {
    case 'json':
      return data === undefined ? '' : `${JSON.stringify(shaped(data), null, 2)}\n`;
    case 'jsonl':
      return toItems(data)
        .map((item) => `${jsonText(columns === undefined ? item : project(item, columns))}\n`)
        .join('');
    case 'yaml':
      return data === undefined ? '' : withNewline(loadYaml().stringify(shaped(data)));
    case 'csv': {
      const items = toItems(data);
      const cols = columns ?? inferColumns(items.map(toRow), true);
      const header = opts.noHeaders === true || cols.length === 0 ? [] : [cols];
      return renderCsvLines([...header, ...csvRows(items, cols)]);
    }
    case 'table':
      return renderTable(data, opts);
  }
}

export interface RowWriter {
  /** Writes the csv header now if the columns are known (otherwise it comes with the first rows); idempotent. */
  header(): void;
  rows(items: unknown[]): void;
  /** Flushes buffered formats (table, json, yaml); writes a header-only csv when no rows came. */
  end(): void;
}

/**
 * Writes pages as they arrive: jsonl, csv and quiet stream; table, json and yaml buffer and print at `end()`.
 * Without `columns`, csv fixes its columns from the first page; later keys are not added.
 */
export function createRowWriter(opts: RenderOptions, write: (chunk: string) => void): RowWriter {
  const streaming = opts.quiet === true || opts.format === 'jsonl' || opts.format === 'csv';
  const buffered: unknown[] = [];
  let csvColumns = opts.columns;
  let headerDone = opts.noHeaders === true;
  let checked = false;

  const writeHeader = () => {
    if (headerDone || csvColumns === undefined || csvColumns.length === 0) return;
    headerDone = true;
    write(renderCsvLines([csvColumns]));
  };

  const header = () => {
    if (opts.format === 'csv' && opts.quiet !== true) writeHeader();
  };

  return {
    header,
    rows(items) {
      if (!streaming) {
        buffered.push(...items);
        return;
      }
      if (items.length === 0) return;
      if (opts.userColumns === true && !checked) checkColumns(items, opts.columns);
      checked = true;
      if (opts.format === 'csv' && opts.quiet !== true) {
        csvColumns ??= inferColumns(items.map(toRow), true);
        writeHeader();
        write(renderCsvLines(csvRows(items, csvColumns)));
        return;
      }
      write(render(items, opts));
    },
    end() {
      if (streaming) {
        header();
        return;
      }
      const text = render(buffered, opts);
      if (text !== '') write(text);
    },
  };
}
