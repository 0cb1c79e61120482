/**
 * Measuring how promptly a cancelled call settles. The machine is shared and
 * noisy, so a latency promise is judged on the median of several attempts:
 * one slow attempt does not fail it, and one fast attempt does not pass it.
 * Every attempt's figure is printed.
 */

/** How late a cancelled call may settle after its deadline or its abort. */
export const SETTLE_BUDGET_MS = 50;

/** How a call settled: its error code (undefined when it resolved), the error, and when. */
export interface Settled {
  code: string | undefined;
  error: unknown;
  at: number;
}

/** Await `body` and report how it settled, at `performance.now()` time. */
export async function settle(body: Promise<unknown>): Promise<Settled> {
  try {
    await body;
    return { code: undefined, error: undefined, at: performance.now() };
  } catch (error) {
    return { code: (error as { code?: string }).code, error, at: performance.now() };
  }
}

/** How many times a latency promise is measured. */
export const LATENCY_ATTEMPTS = 5;

/**
 * Run `attempt` (which returns how late its call settled, in ms)
 * `LATENCY_ATTEMPTS` times, print every figure under `label`, and return
 * the median.
 */
export async function medianLateness(label: string, attempt: () => Promise<number>): Promise<number> {
  const lateness: number[] = [];
  while (lateness.length < LATENCY_ATTEMPTS) lateness.push(await attempt());
  const median = lateness.toSorted((a, b) => a - b)[Math.floor(LATENCY_ATTEMPTS / 2)]!;
  console.log(
    `${label}: settled ${lateness.map((ms) => ms.toFixed(1)).join(' / ')} ms late ` +
      `(median ${median.toFixed(1)} ms, budget ${SETTLE_BUDGET_MS} ms)`,
  );
  return median;
}

/**
 * Abort `call` `afterMs` into it (with `reason`, if given): how it settled
 * and how late after the abort.
 */
export async function abortAfter(
  afterMs: number,
  call: (signal: AbortSignal) => Promise<unknown>,
  reason?: unknown,
): Promise<Settled & { lateness: number; abortedAfter: number }> {
  const controller = new AbortController();
  let abortedAt = Number.NaN;
  const started = performance.now();
  const timer = setTimeout(() => {
    abortedAt = performance.now();
    controller.abort(reason);
  }, afterMs);
  const outcome = await settle(call(controller.signal));
  clearTimeout(timer);
  return { ...outcome, lateness: outcome.at - abortedAt, abortedAfter: abortedAt - started };
}
