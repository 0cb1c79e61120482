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
    for (const item of this.decode(batch)) {
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
