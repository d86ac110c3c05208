#!/usr/bin/env node
// One bounded load run with autocannon, in its own process so that the load generator does not share an event
// loop with the bench that samples the server. Used by bench/run.js; prints one JSON object on stdout.
//
//   node bench/load.js --url http://127.0.0.1:<port>/health --connections 50 --amount 20000 --max-seconds 60
//   node bench/load.js --url http://127.0.0.1:<port>/health --connections 50 --seconds 5
//
// Extra request headers (e.g. X-API-Key) come from the BENCH_LOAD_HEADERS environment variable as a JSON
// object, so that no secret appears in the process list; BENCH_LOAD_REQUEST may give {method, body} (body as a
// string). Only loopback URLs are accepted; the run stops after `amount` responses or `max-seconds`, whichever
// comes first, or after `seconds` when that is given instead.
/* global process, console, setTimeout, clearTimeout, URL */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    connections: { type: 'string', default: '50' },
    amount: { type: 'string', default: '20000' },
    'max-seconds': { type: 'string', default: '60' },
    seconds: { type: 'string' },
  },
});

function fail(message) {
  console.error(`load: ${message}`);
  process.exit(2);
}

const url = new URL(values.url ?? fail('--url is required'));
if (url.hostname !== '127.0.0.1') fail(`only loopback (127.0.0.1) is a valid target, not ${url.hostname}`);
const connections = Number(values.connections);
const amount = Number(values.amount);
const maxSeconds = Number(values['max-seconds']);
const duration = values.seconds === undefined ? undefined : Number(values.seconds);
for (const [name, n] of Object.entries({ connections, amount, maxSeconds, duration: duration ?? 1 })) {
  if (!Number.isInteger(n) || n <= 0) fail(`${name} must be a positive integer`);
}
if (amount < connections) fail('amount must be at least the number of connections');
const headers = process.env.BENCH_LOAD_HEADERS ? JSON.parse(process.env.BENCH_LOAD_HEADERS) : {};
const request = process.env.BENCH_LOAD_REQUEST ? JSON.parse(process.env.BENCH_LOAD_REQUEST) : {};

// Throughput from the first request to the last response: autocannon's own duration runs to the next sample
// tick after the last response, which adds up to a second to a run bounded by amount.
let lastAt = 0;
let responses = 0;
let timedOut = false;

const firstAt = performance.now();
const bound = duration === undefined ? { amount } : { duration };
const instance = autocannon({ url: url.href, connections, ...bound, ...request, headers, timeout: 10 });
instance.on('response', () => {
  responses++;
  lastAt = performance.now();
});
const guard = setTimeout(
  () => {
    timedOut = true;
    instance.stop();
  },
  (duration === undefined ? maxSeconds : duration + 15) * 1000,
);

const result = await instance;
clearTimeout(guard);
const seconds = (lastAt - firstAt) / 1000;
const latency = result.latency;
console.log(
  JSON.stringify({
    url: url.pathname,
    connections,
    amount,
    responses,
    seconds,
    rps: seconds > 0 ? responses / seconds : 0,
    // Bytes read per response, headers included: what a route's answer costs on the wire.
    bytesPerResponse: responses > 0 ? Math.round(result.throughput.total / responses) : 0,
    latencyMs: { mean: latency.average, p50: latency.p50, p90: latency.p90, p99: latency.p99, max: latency.max },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count])),
    stoppedByTimeLimit: timedOut,
  }),
);
