/**
 * The receiving end of a native stream: batches arrive through a callback
 * while the native call runs; each item goes to the caller's callback in
 * order, and the call settles only once every batch the native result counts
 * has arrived (a batch can trail the promise). A throwing callback stops the
 * native work and becomes the rejection.
 */
export class BatchStream<Batch, Item> {
  readonly items: Item[] = [];
  failure: unknown = undefined;
  private received = 0;
  private wake: (() => void) | undefined;

  /** `retain: false` passes items to `onItem` without keeping them in {@link items}. */
  constructor(
    private readonly decode: (batch: Batch) => Item[],
    private readonly onItem: (item: Item) => void,
    private readonly stop: () => void,
    private readonly retain = true,
  ) {}

  /** The native side's batch callback. */
  receive(batch: Batch): void {
    this.received++;
    let items: Item[];
    try {
      items = this.decode(batch);
    } catch (error) {
      // A batch that cannot be read (a text the engine refused) ends the call with its error; thrown
      // here, in the native side's callback, it would go uncaught.
      this.failure ??= error;
      this.stop();
      this.wake?.();
      return;
    }
    for (const item of items) {
      if (this.retain) this.items.push(item);
      if (this.failure !== undefined) continue;
      try {
        this.onItem(item);
      } catch (error) {
        this.failure = error;
        this.stop();
      }
    }
    this.wake?.();
  }

  /** Wait until all `expected` batches have arrived; the items, or the callback's error. */
  async settle(expected: number): Promise<Item[]> {
    while (this.received < expected) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    if (this.failure !== undefined) throw this.failure;
    return this.items;
  }
}

/**
 * How many batches a pulled stream lets the native side hand over before its consumer takes them:
 * at most this many (of up to 256 results each) wait in JS memory, plus the one being taken apart.
 */
export const PULL_WINDOW_BATCHES = 4;

/** The native window a {@link PullStream} gives back a place of for each batch it takes. */
export interface Pacer {
  taken(): void;
}

/**
 * Results read with `for await`: an async iterator over the items of native batches, with
 * backpressure. The native side waits for room in a window of {@link PULL_WINDOW_BATCHES} batches
 * before it hands one over, and each batch taken from the queue here frees its place, so a slow
 * consumer holds the search back instead of letting its answer pile up in memory. Leaving the loop
 * early (`break`, `return`, a throw in its body) cancels the native work and waits for it to end.
 * `result` settles when the native work has: with the summary once the iteration ran to its end,
 * with the error that ended it (`ABORT_ERR` after leaving early).
 */
export class PullStream<Batch, Item, Summary> implements AsyncIterableIterator<Item> {
  /** The summary of the search (counts, `unreadable`), once it has ended. */
  readonly result: Promise<Summary>;
  private readonly queue: Item[][] = [];
  private current: Item[] = [];
  private at = 0;
  private received = 0;
  private expected: number | undefined;
  private failure: { error: unknown } | undefined;
  private closed = false;
  private wake: (() => void) | undefined;

  /**
   * `start` runs the native call with this stream's batch callback; it resolves with the summary
   * and how many batches the native side handed over.
   */
  constructor(
    private readonly decode: (batch: Batch) => Item[],
    private readonly pacer: Pacer | undefined,
    private readonly cancel: () => void,
    start: (receive: (batch: Batch) => void) => Promise<{ summary: Summary; batches: number }>,
  ) {
    const run = (async () => start((batch) => this.receive(batch)))();
    this.result = run.then(({ summary }) => summary);
    // The stream reports a failure through `next()`; `result` is the caller's to await or not.
    this.result.catch(() => {});
    run.then(
      ({ batches }) => this.end(batches),
      (error: unknown) => this.fail(error),
    );
  }

  /** Results handed over and not yet taken by the consumer. */
  get buffered(): number {
    return this.current.length - this.at + this.queue.reduce((sum, batch) => sum + batch.length, 0);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Item>> {
    for (;;) {
      if (this.closed) return { value: undefined, done: true };
      if (this.at < this.current.length) return { value: this.current[this.at++], done: false };
      const batch = this.queue.shift();
      if (batch !== undefined) {
        [this.current, this.at] = [batch, 0];
        this.pacer?.taken();
        continue;
      }
      if (this.failure !== undefined) throw this.failure.error;
      if (this.expected !== undefined && this.received >= this.expected) return { value: undefined, done: true };
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Leave early: cancel the native work and wait until it has ended. */
  async return(): Promise<IteratorResult<Item>> {
    this.closed = true;
    this.cancel();
    await this.result.catch(() => {});
    [this.current, this.at] = [[], 0];
    this.queue.length = 0;
    return { value: undefined, done: true };
  }

  private receive(batch: Batch): void {
    this.received++;
    try {
      this.queue.push(this.decode(batch));
    } catch (error) {
      // As BatchStream's: the loop's next step rejects with it, and the native work stops.
      this.failure ??= { error };
      this.cancel();
    }
    this.poke();
  }

  private end(batches: number): void {
    this.expected = batches;
    this.poke();
  }

  private fail(error: unknown): void {
    this.failure = { error };
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
