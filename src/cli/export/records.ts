import { Transform, type TransformCallback } from 'node:stream';

/** The body formats of a cursor export (01 §4.9 "Audit export"). */
export type ExportFormat = 'csv' | 'jsonl';

const NEWLINE = 0x0a;
const QUOTE = 0x22;

/**
 * Splits one page of a cursor export into records as the bytes stream through, without holding the page:
 * counts the records (a JSON line, or a CSV record — a quoted CSV cell may hold line breaks, RFC 4180, so
 * CSV is split on newlines outside quotes) and, when asked, drops the first record (the CSV header the server
 * repeats on every page). Every other byte passes through unchanged, as slices of the chunks received.
 *
 * A last record without a line end is counted, and a `\n` is added after it so that pages concatenate into
 * well-formed lines.
 */
export class ExportRecordSplitter extends Transform {
  /** Records seen, the dropped header included. */
  records = 0;
  /** Bytes passed on. */
  bytesOut = 0;
  private inQuotes = false;
  /** Bytes of a record whose line end has not arrived yet. */
  private open = false;
  private dropping: boolean;

  constructor(
    private readonly format: ExportFormat,
    options: { dropFirstRecord: boolean },
  ) {
    super();
    this.dropping = options.dropFirstRecord;
  }

  /** Data rows: the records, less the header of a CSV page. */
  get rows(): number {
    return this.format === 'csv' ? Math.max(0, this.records - 1) : this.records;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const length = chunk.length;
    if (length === 0) {
      callback();
      return;
    }
    let pos = 0;
    let lastEnd = -1;
    let emitFrom = this.dropping ? -1 : 0;
    // Positions of the next quote and newline, found once and reused until passed (indexOf is native; looking
    // again after every record would rescan the rest of the chunk).
    let nextQuote = this.format === 'csv' ? chunk.indexOf(QUOTE, 0) : -1;
    let nextNewline = chunk.indexOf(NEWLINE, 0);
    while (pos < length) {
      if (this.inQuotes) {
        if (nextQuote === -1) break;
        this.inQuotes = false;
        pos = nextQuote + 1;
        nextQuote = chunk.indexOf(QUOTE, pos);
        continue;
      }
      if (nextNewline !== -1 && nextNewline < pos) nextNewline = chunk.indexOf(NEWLINE, pos);
      if (nextQuote !== -1 && (nextNewline === -1 || nextQuote < nextNewline)) {
        // A quote opens a quoted cell ("" inside one closes and reopens it: the same thing).
        this.inQuotes = true;
        pos = nextQuote + 1;
        nextQuote = chunk.indexOf(QUOTE, pos);
        continue;
      }
      if (nextNewline === -1) break;
      this.records += 1;
      lastEnd = nextNewline;
      if (this.dropping) {
        this.dropping = false;
        emitFrom = nextNewline + 1;
      }
      pos = nextNewline + 1;
      nextNewline = chunk.indexOf(NEWLINE, pos);
    }
    this.open = lastEnd === -1 ? true : lastEnd < length - 1 || this.inQuotes;
    if (emitFrom !== -1 && emitFrom < length) this.pass(emitFrom === 0 ? chunk : chunk.subarray(emitFrom));
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.open) {
      this.records += 1;
      if (!this.dropping) this.pass(Buffer.from('\n'));
      this.dropping = false;
      this.open = false;
    }
    callback();
  }

  private pass(bytes: Buffer): void {
    this.bytesOut += bytes.length;
    this.push(bytes);
  }
}
