import { parse } from 'csv-parse/sync';
import type { z } from 'zod';
import { AccessReviewDecisionSchema, AccessReviewItemUpdateSchema } from '../contract/access-reviews.js';

/**
 * The decisions file of `svc access-reviews decide --from-file`: CSV with the columns itemId, decision and notes
 * (notes optional), or a JSON/YAML list of such objects. Every problem of the whole file is collected before
 * anything is sent, each with the line (CSV) or entry (JSON/YAML) it is on.
 */
export const DECISION_FIELDS = ['itemId', 'decision', 'notes'] as const;
const REQUIRED = ['itemId', 'decision'] as const;

export type Decision = z.infer<typeof AccessReviewDecisionSchema>;

export interface DecisionRow {
  /** `line 3` or `entry 2`: where the row is, for messages. */
  where: string;
  itemId: string;
  decision: Decision;
  /** Omitted when the cell is empty: the item's notes are then left as they are. */
  notes?: string;
}

export interface DecisionProblem {
  where: string;
  message: string;
}

export interface ParsedDecisions {
  rows: DecisionRow[];
  problems: DecisionProblem[];
}

interface RawEntry {
  where: string;
  fields: Record<string, unknown>;
}

const DECISIONS = AccessReviewDecisionSchema.options.join(', ');

/** CSV text → entries keyed by column, with problems of the header and of the shape of each row. */
function csvEntries(text: string): { entries: RawEntry[]; problems: DecisionProblem[] } {
  const problems: DecisionProblem[] = [];
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // Line ends are normalised first: csv-parse miscounts lines after an empty CRLF line.
    records = parse(text.replace(/\r\n?/g, '\n'), {
      bom: true,
      info: true,
      skip_empty_lines: true,
      relax_column_count: true,
      trim: true,
    }) as unknown as typeof records;
  } catch (err) {
    return { entries: [], problems: [{ where: 'file', message: `not valid CSV: ${(err as Error).message}` }] };
  }
  const [head, ...body] = records;
  if (!head)
    return {
      entries: [],
      problems: [{ where: 'file', message: `empty: expected a header row ${DECISION_FIELDS.join(',')}` }],
    };
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const name of head.record) {
    const field = DECISION_FIELDS.find((f) => f.toLowerCase() === name.toLowerCase());
    if (!field)
      problems.push({
        where: 'line 1',
        message: `unknown column "${name}" (the columns are ${DECISION_FIELDS.join(', ')})`,
      });
    else if (seen.has(field)) problems.push({ where: 'line 1', message: `column "${field}" appears twice` });
    seen.add(field ?? name);
    columns.push(field ?? name);
  }
  for (const field of REQUIRED)
    if (!seen.has(field)) problems.push({ where: 'line 1', message: `missing column "${field}"` });
  if (problems.length > 0) return { entries: [], problems };

  const entries: RawEntry[] = [];
  for (const { record, info } of body) {
    // info.lines is where the record ends; a quoted field may span lines.
    const line = info.lines - (record.join('').split('\n').length - 1);
    const where = `line ${line}`;
    if (record.length !== columns.length) {
      problems.push({
        where,
        message: `expected ${columns.length} fields (${columns.join(',')}), got ${record.length}`,
      });
      continue;
    }
    entries.push({ where, fields: Object.fromEntries(columns.map((c, i) => [c, record[i]])) });
  }
  return { entries, problems };
}

/** A parsed JSON/YAML document → entries (a list of objects, or `{decisions: [...]}`). */
function dataEntries(data: unknown): { entries: RawEntry[]; problems: DecisionProblem[] } {
  const list =
    typeof data === 'object' && data !== null && !Array.isArray(data) && 'decisions' in data ? data.decisions : data;
  if (!Array.isArray(list))
    return {
      entries: [],
      problems: [{ where: 'file', message: 'expected a list of {itemId, decision, notes} objects' }],
    };
  const problems: DecisionProblem[] = [];
  const entries: RawEntry[] = [];
  list.forEach((value: unknown, index) => {
    const where = `entry ${index + 1}`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push({ where, message: 'expected an object {itemId, decision, notes}' });
      return;
    }
    const unknown = Object.keys(value).filter((k) => !(DECISION_FIELDS as readonly string[]).includes(k));
    if (unknown.length > 0)
      problems.push({
        where,
        message: `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')} (the fields are ${DECISION_FIELDS.join(', ')})`,
      });
    else entries.push({ where, fields: value as Record<string, unknown> });
  });
  return { entries, problems };
}

/** Checks each entry with the contract and against the review's items; collects every problem. */
function checkEntries(entries: RawEntry[], itemIds: ReadonlySet<string>): ParsedDecisions {
  const rows: DecisionRow[] = [];
  const problems: DecisionProblem[] = [];
  const firstSeen = new Map<string, string>();
  for (const { where, fields } of entries) {
    const itemId = typeof fields.itemId === 'string' ? fields.itemId.trim() : '';
    const rawNotes = fields.notes;
    const notes = rawNotes === undefined || rawNotes === null || rawNotes === '' ? undefined : rawNotes;
    const mine: string[] = [];
    if (itemId === '') mine.push('itemId is empty');
    else if (firstSeen.has(itemId))
      mine.push(`item ${itemId} appears again (first on ${firstSeen.get(itemId) ?? '?'})`);
    else if (!itemIds.has(itemId)) mine.push(`item ${itemId} is not in this review`);
    if (itemId !== '' && !firstSeen.has(itemId)) firstSeen.set(itemId, where);
    const parsed = AccessReviewItemUpdateSchema.safeParse({
      decision: fields.decision,
      ...(notes === undefined ? {} : { notes }),
    });
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = String(issue.path[0] ?? 'row');
        mine.push(
          field === 'decision'
            ? `decision must be one of ${DECISIONS}, got ${JSON.stringify(fields.decision ?? '')}`
            : `${field}: ${issue.message}`,
        );
      }
    }
    if (mine.length > 0 || !parsed.success) {
      problems.push(...mine.map((message) => ({ where, message })));
      continue;
    }
    rows.push({
      where,
      itemId,
      decision: parsed.data.decision,
      ...(typeof parsed.data.notes === 'string' ? { notes: parsed.data.notes } : {}),
    });
  }
  return { rows, problems };
}

/** Parses a decisions file (CSV text, or a parsed JSON/YAML document) and checks all of it. */
export function parseDecisions(
  input: { csv: string } | { data: unknown },
  itemIds: ReadonlySet<string>,
): ParsedDecisions {
  const { entries, problems } = 'csv' in input ? csvEntries(input.csv) : dataEntries(input.data);
  const checked = checkEntries(entries, itemIds);
  const all = [...problems, ...checked.problems];
  if (all.length === 0 && checked.rows.length === 0) all.push({ where: 'file', message: 'no decisions in the file' });
  return { rows: all.length > 0 ? [] : checked.rows, problems: all };
}

/** The one message listing every problem, for exit 2. */
export function describeProblems(file: string, problems: readonly DecisionProblem[]): string {
  const lines = problems.map((p) => `  ${p.where}: ${p.message}`);
  return `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}, nothing was sent:\n${lines.join('\n')}`;
}
