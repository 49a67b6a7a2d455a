/**
 * Waits on a condition, not a clock: calls `probe` every `intervalMs` until it gives a value
 * (anything but undefined or false) and returns it; after `timeoutMs` it throws, saying what it
 * waited for (`what` may be a function, to tell the state at that moment). A spec whose point is that nothing happens within a time sleeps instead, and says so.
 */
export async function until<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Reads `read` every `intervalMs` until `done` holds for what it read and returns that; after
 * `timeoutMs` it throws, naming what it waited for and the last value it saw.
 */
export async function untilRead<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 90_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
    value = await read();
  }
  return value;
}
