/**
 * The messages a run sends to its model, round after round. For a client that reads them only
 * during its call (`ChatClient.readsMessagesOnlyDuringCall`), the run reuses one array: the kept
 * model view of the history, lent by the cache, with this run's messages pushed after it, so a turn
 * on a long history copies none of it. Any other client gets a new array for every call, which it
 * may keep.
 */
import type { ChatClient } from "../chat-client.js";
import type { ChatMessage } from "../../core/messages.js";
import type { ModelViewLoan } from "../approvals.js";

export class ModelRequest {
  /** A client call that may still read `messages` (a stream stopped before it ended). */
  private reading: Promise<unknown> | undefined;

  /**
   * @param messages What the next call is given.
   * @param reused Whether `messages` may be changed once a call is over (the client keeps no reference).
   * @param loan The kept model view `messages` is, when it is one: given back by `release`.
   */
  constructor(
    public messages: ChatMessage[],
    private readonly reused: boolean,
    private readonly loan?: ModelViewLoan,
  ) {}

  /** Whether `client` lets the run reuse the array it sends (see `ChatClient.readsMessagesOnlyDuringCall`). */
  static reusable(client: ChatClient): boolean {
    return client.readsMessagesOnlyDuringCall === true;
  }

  /** The next call's messages: these after the current ones. */
  extend(added: readonly ChatMessage[]): void {
    if (!this.reused) {
      this.messages = this.messages.concat(added); // the client may hold the previous array
      return;
    }
    for (const message of added) this.messages.push(message); // no push(...added): a long batch overflows the stack
  }

  /** The next call's messages: these only (a hosted conversation continued at the service). */
  replace(messages: ChatMessage[]): void {
    this.messages = messages;
  }

  /** A call ended while its client may still read `messages` until `done` settles (a stream it did not finish). */
  stillReading(done: Promise<unknown>): void {
    this.reading = done;
  }

  /**
   * The run is over: a lent view goes back to the cache, once no call can still read it. A client
   * that never lets go (a stream that never ends) keeps it out of the cache; the cache then starts
   * a new view when the history grows.
   */
  release(): void {
    const loan = this.loan;
    if (!loan) return;
    if (this.reading) void this.reading.then(loan.giveBack, loan.giveBack);
    else loan.giveBack();
  }
}
