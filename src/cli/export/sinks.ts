import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Transform } from 'node:stream';
import type { RawBody } from '../../client/http.js';

/** Where the pages of an export go: each page streams through its record splitter into the sink. */
export interface PageSink {
  /** Writes one page; a reader that went away (`| head`) resolves to false instead of failing. */
  write(body: RawBody, splitter: Transform): Promise<boolean>;
  /** Puts the output back as it was before the page being written (a file is cut back to `bytes`). */
  discard(bytes: number): Promise<void>;
  /** Makes the pages written so far durable (a file is fsynced before its checkpoint names them). */
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** Appends to the export file through one handle opened for appending (O_APPEND), so after the file is cut
 * back to the checkpoint the next write lands right there. `discard` first waits for a write still in flight
 * (the stream may be destroyed with one pending). */
export function fileSink(handle: FileHandle): PageSink {
  let pending: Promise<unknown> = Promise.resolve();
  const appender = () =>
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        const write = handle.write(chunk);
        pending = write.catch(() => undefined);
        write.then(
          () => callback(),
          (err: Error) => callback(err),
        );
      },
    });
  return {
    async write(body, splitter) {
      await pipeline(body, splitter, appender());
      return true;
    },
    async discard(bytes) {
      await pending;
      await handle.truncate(bytes);
    },
    sync: () => handle.sync(),
    close: () => handle.close(),
  };
}

function isBrokenPipe(err: unknown): boolean {
  return (
    typeof err === 'object' &&
    err !== null &&
    'code' in err &&
    (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED')
  );
}

/**
 * Writes pages into one stream that outlives them (stdout), honouring backpressure. Not a pipeline destination:
 * a pipeline per page would add listeners to stdout for every page and never remove them.
 */
export function streamSink(destination: NodeJS.WritableStream): PageSink {
  let failure: Error | undefined;
  const onError = (err: unknown) => {
    failure ??= err instanceof Error ? err : new Error(String(err));
  };
  destination.on('error', onError);
  const drained = () =>
    new Promise<void>((resolve, reject) => {
      const done = () => {
        destination.off('error', fail);
        resolve();
      };
      const fail = (err: unknown) => {
        destination.off('drain', done);
        reject(err instanceof Error ? err : new Error(String(err)));
      };
      destination.once('drain', done);
      destination.once('error', fail);
    });
  const copy = async (source: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of source) {
      if (failure !== undefined) throw failure;
      if (!destination.write(chunk)) await drained();
    }
    if (failure !== undefined) throw failure;
  };
  return {
    async write(body, splitter) {
      try {
        await pipeline(body, splitter, copy);
        return true;
      } catch (err) {
        if (isBrokenPipe(err)) return false;
        throw err;
      }
    },
    discard: async () => undefined,
    sync: async () => undefined,
    close: async () => {
      destination.off('error', onError);
    },
  };
}
