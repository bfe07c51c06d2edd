/**
 * Gives the C allocator's free memory back to the system, now and then, on Linux with
 * glibc (its `malloc_trim`, called through koffi's foreign-function interface).
 *
 * Why: glibc returns a freed block to the system only when it lies at the top of its
 * heap. Everything the server frees in the middle of a heap (the buffers of a first
 * start's import and embedding, of messages between its threads, of a keyword copy
 * replaced) stays resident for as long as the process runs. Measured on the starter
 * corpus: a first start settled at about 440 MiB, 330 MiB once trimmed; a restart at
 * about 390, 350 trimmed (docs/testing.md, "A leaner server"). V8 frees a buffer when
 * it collects the object that held it, seconds after the work, so one trim right
 * after the work would miss much of it: the server trims on a timer instead. A trim
 * with little to give back takes well under a millisecond; one with much to give back runs
 * on the thread pool, so requests do not wait for it.
 *
 * Elsewhere (another C library, another system, koffi missing) there is nothing to
 * call and the timer is not started.
 */
import { createRequire } from 'node:module';

/** How often the server trims. */
export const MEMORY_RELEASE_INTERVAL_MS = 10_000;

type Trim = ((pad: number) => number) & { async(pad: number, done: (error: unknown, result: number) => void): void };

let loaded: Trim | null | undefined;

/** glibc's `malloc_trim`, or null where there is none to call. */
function mallocTrim(): Trim | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  if (process.platform !== 'linux') return loaded;
  // glibc says so in the report's header; musl's reports carry no glibc version.
  const header = process.report?.getReport?.() as { header?: { glibcVersionRuntime?: string } } | undefined;
  if (!header?.header?.glibcVersionRuntime) return loaded;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    loaded = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)') as Trim;
  } catch {
    loaded = null;
  }
  return loaded;
}

/** Trims now: true if the allocator gave memory back, false if it had none to give or there is no trim here. */
export function releaseFreedMemory(): boolean {
  const trim = mallocTrim();
  return trim ? trim(0) === 1 : false;
}

/**
 * Trims on libuv's thread pool (koffi's asynchronous call), not on the event loop: with a
 * few hundred MiB freed during an import a trim took up to 30 ms, and every request waited
 * for it. Resolves as `releaseFreedMemory` returns; one trim at a time.
 */
let trimming: Promise<boolean> | undefined;
export function releaseFreedMemoryInBackground(): Promise<boolean> {
  const trim = mallocTrim();
  if (!trim) return Promise.resolve(false);
  trimming ??= new Promise<boolean>((resolve) => trim.async(0, (error, result) => resolve(!error && result === 1))).finally(() => (trimming = undefined));
  return trimming;
}

/** Whether this process can trim (Linux, glibc, koffi loaded). */
export const canReleaseMemory = (): boolean => mallocTrim() !== null;

/**
 * Trims every `intervalMs` until the returned function is called, with a timer that never
 * keeps the process alive. Whether this process can trim is found out on the first tick,
 * not at once: the server calls this as it starts answering, and loading the library
 * takes some milliseconds. Where there is no trim the timer stops there.
 */
export function startMemoryRelease(intervalMs = MEMORY_RELEASE_INTERVAL_MS): () => void {
  const timer = setInterval(() => {
    if (!canReleaseMemory()) clearInterval(timer);
    else void releaseFreedMemoryInBackground();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
