/** A one-producer, one-consumer async queue: how a run hands streaming updates to its consumer. */
export class UpdateChannel<T> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private wake?: () => void;
  private closed = false;
  private failure: { error: unknown } | undefined;
  private drainWaiters: (() => void)[] = [];

  push(value: T): void {
    if (this.closed) return;
    this.queue.push(value);
    this.signal();
  }

  close(): void {
    this.closed = true;
    this.signal();
  }

  fail(error: unknown): void {
    this.failure = { error };
    this.close();
  }

  /**
   * Resolves once the consumer has taken every value pushed so far and asked for the next one.
   * A run waits for this before committing, so a consumer that stops after any update (even the
   * last) still leaves the session unchanged.
   */
  drained(): Promise<void> {
    if (this.wake !== undefined && this.queue.length === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.queue.length) {
        yield this.queue.shift()!;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.closed) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        for (const waiter of waiters) waiter();
      });
    }
  }
}
