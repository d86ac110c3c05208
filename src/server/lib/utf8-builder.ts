/** Bytes of one chunk; a longer piece of text gets a chunk of its own size. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Text appended piece by piece as UTF-8 into chunks, joined once at the end: how an export page is built.
 * Concatenating the page into one string and encoding it at the end costs many times more, because V8 must
 * first flatten a string made of thousands of pieces; a buffer that doubles as it grows copies and faults in
 * fresh memory at every step (a 1,000-row CSV page of ~680 KB: ~4-6 ms as one string, ~0.6-1.5 ms doubling,
 * ~0.25 ms in chunks; docs/api-notes.md "Exports").
 */
export class Utf8Builder {
  private readonly full: Buffer[] = [];
  private fullBytes = 0;
  private chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;

  append(text: string): void {
    // A UTF-16 code unit never takes more than three bytes of UTF-8, so this much room is always enough.
    const most = text.length * 3;
    if (this.used + most > this.chunk.length) {
      this.full.push(this.chunk.subarray(0, this.used));
      this.fullBytes += this.used;
      this.chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, most));
      this.used = 0;
    }
    this.used += this.chunk.write(text, this.used, 'utf8');
  }

  get byteLength(): number {
    return this.fullBytes + this.used;
  }

  /** Everything appended, as one buffer (call it once, when done appending). */
  bytes(): Buffer {
    const last = this.chunk.subarray(0, this.used);
    return this.full.length === 0 ? last : Buffer.concat([...this.full, last], this.byteLength);
  }
}
