// Preloaded into the alerts bench's server with BENCH_ALERTS_PROBE (node --import): on SIGWINCH it appends the
// process's memory (process.memoryUsage() and the V8 heap spaces, used/size in MB) to $PROBE_OUT, one JSON line
// labelled with the text of $PROBE_OUT.label (the bench writes the phase's name there before signalling). Under
// node --expose-gc it collects garbage first (`gc: true`): what is retained, not what the last collection left.
/* global process */
import fs from 'node:fs';
import v8 from 'node:v8';

const out = process.env.PROBE_OUT;
const mb = (n) => Math.round((n / 1048576) * 10) / 10;
if (out) {
  process.on('SIGWINCH', () => {
    const gc = typeof globalThis.gc === 'function';
    if (gc) globalThis.gc();
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, `${mb(s.space_used_size)}/${mb(s.space_size)}`]));
    const label = fs.existsSync(`${out}.label`) ? fs.readFileSync(`${out}.label`, 'utf8').trim() : '';
    const line = { label, gc, rss: mb(m.rss), heapTotal: mb(m.heapTotal), heapUsed: mb(m.heapUsed), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers), spaces };
    fs.appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}
