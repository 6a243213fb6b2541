/**
 * The standalone Redis store's per-command timeout (CommandDeadlines, connection.ts): one queue and
 * one timer per connection. An answered command is released at the next send (it holds its
 * arguments and its reply, a session's body each: held on, 8 concurrent writers kept thousands of
 * them alive, which the garbage collector then paid for); a command answered with an error (the
 * driver never marks it resolved) does not keep the answered ones behind it; a command without a
 * reply still fails at its deadline, and an answered one never does.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CommandDeadlines } from "../../src/runtime/stores/redis/connection.js";

interface FakeCommand {
  isResolved: boolean;
  rejected: Error[];
  reject(error: Error): void;
}

function command(): FakeCommand {
  const self: FakeCommand = {
    isResolved: false,
    rejected: [],
    reject: (error) => {
      self.rejected.push(error);
    },
  };
  return self;
}

const open: CommandDeadlines[] = [];
function deadlines(timeoutMs: number): CommandDeadlines {
  const made = new CommandDeadlines(timeoutMs);
  open.push(made);
  return made;
}

afterEach(() => {
  for (const made of open.splice(0)) made.clear();
});

describe("CommandDeadlines", () => {
  it("releases every answered command at the next send (one call at a time)", () => {
    const queue = deadlines(10_000);
    for (let n = 0; n < 1000; n++) {
      const sent = command();
      queue.add(sent);
      sent.isResolved = true;
    }
    queue.add(command());
    expect(queue.held).toBe(1);
  });

  it("one call at a time: the slot of the answered command is reused, and a silent one still fails at its deadline", async () => {
    const queue = deadlines(40);
    const answered: FakeCommand[] = [];
    for (let n = 0; n < 100; n++) {
      const sent = command();
      queue.add(sent);
      sent.isResolved = true;
      answered.push(sent);
    }
    const silent = command();
    queue.add(silent);
    expect(queue.held).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(answered.flatMap((sent) => sent.rejected)).toEqual([]);
    expect(silent.rejected.map((error) => error.message)).toEqual(["Command timed out"]);
    expect(queue.held).toBe(0);
  });

  it("holds only the commands in flight while concurrent callers keep it from ever emptying", () => {
    const queue = deadlines(10_000);
    const inFlight: FakeCommand[] = [];
    let most = 0;
    for (let n = 0; n < 10_000; n++) {
      const sent = command();
      queue.add(sent);
      inFlight.push(sent);
      // Eight callers on one connection: replies come back in order, the oldest first.
      if (inFlight.length > 8) inFlight.shift()!.isResolved = true;
      most = Math.max(most, queue.held);
    }
    expect(most).toBeLessThanOrEqual(9);
  });

  it("a command answered with an error does not keep the answered commands behind it", () => {
    const queue = deadlines(10_000);
    const failed = command(); // an error reply: the driver rejects it and never sets isResolved
    queue.add(failed);
    for (let n = 0; n < 5000; n++) {
      const sent = command();
      queue.add(sent);
      sent.isResolved = true;
    }
    expect(queue.held).toBeLessThanOrEqual(257);
  });

  it("still fails a command with no reply at its deadline, never one that was answered", async () => {
    const queue = deadlines(40);
    const answered = command();
    const silent = command();
    queue.add(answered);
    queue.add(silent);
    for (let n = 0; n < 600; n++) {
      const sent = command();
      queue.add(sent);
      sent.isResolved = true;
    }
    answered.isResolved = true;
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(answered.rejected).toEqual([]);
    expect(silent.rejected.map((error) => error.message)).toEqual(["Command timed out"]);
    expect(queue.held).toBe(0);
  });
});
