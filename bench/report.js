// What the benchmark scripts measure and print with: medians, the machine, a process's memory and CPU time from
// /proc, and the one table style.
/* global process, console */
import fs from 'node:fs';
import os from 'node:os';

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
export const round = (n, digits = 1) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : n);

/** The machine and its load, printed first by every script. */
export function printMachine(title) {
  console.log(
    `${title}: node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), ${os.platform()} ${os.release()}`,
  );
  console.log(
    `load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}\n`,
  );
}

/** VmHWM and VmRSS of a process in MB; null once it is gone. */
export function procStatus(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
    return { hwm: field('VmHWM'), rss: field('VmRSS') };
  } catch {
    return null; // gone (or a zombie without memory fields)
  }
}

/** The CPU time a process has used so far, in ms (utime + stime, clock ticks of 10 ms); null without /proc. */
export function cpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces: utime and stime are the
    // 14th and 15th of the whole line.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Rows of {m, v, unit, ratio, target, pass} as the bench's one table style; `value` names the value column. */
export function printTable(rows, value = 'median') {
  const table = [['measurement', value, 'ratio', 'target', 'result']].concat(
    rows.map((r) => [
      r.m,
      typeof r.v === 'string' ? r.v : `${round(r.v)} ${r.unit}`,
      r.ratio === null ? '' : `${round(r.ratio, 2)}×`,
      r.target,
      r.pass === null ? '' : r.pass ? 'pass' : 'FAIL',
    ]),
  );
  printColumns(table);
}

/** Prints rows of strings (the first is the header) as left-aligned columns. */
export function printColumns(table) {
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table)
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
}
