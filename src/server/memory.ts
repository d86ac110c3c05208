import v8 from 'node:v8';

/**
 * How far V8 lets the old generation grow past what its last full collection kept, in percent, in the server
 * process (docs/api-notes.md, "The bundled server": memory). V8's own factor runs up to 4× on a machine with
 * gigabytes to spare: after a burst of deliveries its heap kept ~90 MB of garbage, never given back while work
 * continued. At 30 % the old generation is collected once it grew by about a third (the collections mark
 * concurrently; what is live is unchanged).
 */
export const HEAP_GROWING_PERCENT = 30;

let applied = false;

/** The V8 setting the server runs with: applied once per process by startServer (`svc server start`), before the
 * app is built, unless the process was started with a growing setting of its own (`node --heap-growing-percent`).
 * A heuristic V8 reads at each full collection, so it takes effect when set at run time. */
export function applyServerMemorySettings(): void {
  if (applied) return;
  applied = true;
  if (process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
