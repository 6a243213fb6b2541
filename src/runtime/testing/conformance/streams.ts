/**
 * The contract on stream buffers (`store.streams`): the chunks of a running reply, replayed from
 * any position and followed live until the writer finishes, a stop asked for through the store,
 * the writer's lease (a recovering process ends an abandoned stream, never a live one), expiry
 * after `keepMs`, and streams going with their session (delete, erasure). Waits for a lease or a
 * `keepMs` to pass are sleeps a few times longer than the lease; no case asserts a duration.
 */
import { ConfigurationError } from "../../../index.js";
import { ConflictError, StreamClosedError, type SessionStore, type StreamBuffer } from "../../../stores.js";
import { counterSession, sleep, type ContractCase } from "./case.js";
import type { Clause } from "./check.js";

const LEASE = 60_000;
const KEEP = 60_000;

function streamsOf(store: SessionStore, check: Clause): StreamBuffer {
  const streams = store.streams;
  if (!streams) throw check.violation("the store has no `streams` (declare skip.streams)", new Error("no streams"));
  return streams;
}

/** Every chunk `follow` yields until it ends. */
async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
}

export const streamCases: ContractCase[] = [
  {
    area: "streams",
    clause: "append adds chunks in order and read returns them from any position, with the stream's state",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream");
      const session = id("chat");
      await streams.open(sid, { sessionId: session, leaseMs: LEASE });
      const opened = await streams.info(sid);
      check.equal(
        opened && { ...opened, leaseExpiresAt: 0 },
        { streamId: sid, sessionId: session, status: "running", length: 0, stopRequested: false, leaseExpiresAt: 0 },
        "info of a stream just opened: running, empty, no stop requested",
      );
      check.greater(opened!.leaseExpiresAt, Date.now(), "the lease of a stream just opened lies ahead");
      check.equal(await streams.append(sid, ["a", "b"], LEASE), { length: 2, stopRequested: false }, "first append");
      check.equal(await streams.append(sid, [], LEASE), { length: 2, stopRequested: false }, "an empty append");
      check.equal(await streams.append(sid, ["c"], LEASE), { length: 3, stopRequested: false }, "second append");
      const all = await streams.read(sid, { from: 0 });
      check.equal(all?.chunks, ["a", "b", "c"], "read from 0 returns every chunk in append order");
      check.equal(all?.info.length, 3, "read's info counts the chunks");
      check.equal(all?.info.status, "running", "read's info says running");
      check.equal((await streams.read(sid, { from: 1, limit: 1 }))?.chunks, ["b"], "read from 1, limit 1");
      check.equal((await streams.read(sid, { from: 2, limit: 10 }))?.chunks, ["c"], "read from 2, limit past the end");
      check.equal((await streams.read(sid, { from: 7 }))?.chunks, [], "read past the end: no chunks");
    },
  },
  {
    area: "streams",
    clause:
      "open with chunks: the stream starts with them at positions 0, 1, ...; appends go after them; a bad chunk opens nothing",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-first");
      const first = ['{"type":"record","text":"héllo\\n"}', "", "ünïcode 😀"];
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE, chunks: first });
      check.equal((await streams.info(sid))?.length, first.length, "info counts the chunks the open wrote");
      check.equal((await streams.read(sid, { from: 0 }))?.chunks, first, "read from 0 returns them as given");
      check.equal(
        await streams.append(sid, ["after"], LEASE),
        { length: first.length + 1, stopRequested: false },
        "an append goes after them",
      );
      check.equal((await streams.read(sid, { from: 2 }))?.chunks, [first[2], "after"], "read from 2");
      await streams.finish(sid, "done", { keepMs: KEEP });
      const followed: string[] = [];
      for await (const chunk of streams.follow(sid)) followed.push(chunk);
      check.equal(followed, [...first, "after"], "follow yields them first");
      await check.rejects(
        streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE, chunks: ["again"] }),
        ConflictError,
        "an id that exists, opened with chunks",
      );
      check.equal(
        (await streams.read(sid, { from: 0 }))?.chunks,
        [...first, "after"],
        "the refused open changed nothing",
      );
      const bad = id("stream-first-bad");
      await check.rejects(
        streams.open(bad, { sessionId: id("chat"), leaseMs: LEASE, chunks: ["ok", "nul \0 inside"] }),
        ConfigurationError,
        "an open whose chunk holds a NUL",
      );
      check.equal(await streams.info(bad), undefined, "the refused open created nothing");
    },
  },
  {
    area: "streams",
    clause: "chunk text round-trips exactly (unicode, escapes, empty string, large chunks) through read and follow",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-text");
      const large = `{"type":"text-delta","delta":"${"0123456789abcdef🌍é".repeat(20_000)}"}`;
      const chunks = [
        "",
        "héllo wörld 🌍 \u2028\u2029 ﬁ 日本語",
        JSON.stringify({ type: "text-delta", id: "t1", delta: 'quote " backslash \\ newline \n tab \t \ud800' }),
        " ",
        large,
        "\r\n",
        "$1 %s \u0024{x} \\u0000",
      ];
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
      await streams.append(sid, chunks.slice(0, 3), LEASE);
      await streams.append(sid, chunks.slice(3), LEASE);
      check.equal(
        (await streams.read(sid, { from: 0 }))?.chunks,
        chunks,
        "read returns each chunk exactly as appended",
      );
      await streams.finish(sid, "done", { keepMs: KEEP });
      check.equal(await collect(streams.follow(sid)), chunks, "follow yields each chunk exactly as appended");
    },
  },
  {
    area: "streams",
    clause: "followers started before the appends see every chunk in order, from any position, and end on finish",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-live");
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
      const fromStart = collect(streams.follow(sid));
      const fromTwo = collect(streams.follow(sid, { from: 2 }));
      const expected: string[] = [];
      for (let i = 0; i < 6; i++) {
        const batch = i % 2 === 0 ? [`c${expected.length}`] : [`c${expected.length}`, `c${expected.length + 1}`];
        expected.push(...batch);
        await streams.append(sid, batch, LEASE);
        await sleep(i * 3); // some appends land while followers wait, some back to back
      }
      const midway = collect(streams.follow(sid, { from: 1 }));
      await streams.append(sid, ["last"], LEASE);
      expected.push("last");
      check.equal(await streams.finish(sid, "done", { keepMs: KEEP }), true, "finish of a running stream returns true");
      check.equal(await fromStart, expected, "a follower from 0 started before any append yields every chunk in order");
      check.equal(await fromTwo, expected.slice(2), "a follower from 2 yields the chunks from position 2 in order");
      check.equal(await midway, expected.slice(1), "a follower started midway from 1 replays, then follows to the end");
      check.equal(
        await collect(streams.follow(sid, { from: 4 })),
        expected.slice(4),
        "following a finished stream replays and ends",
      );
      check.equal(
        await collect(streams.follow(sid, { from: 99 })),
        [],
        "following a finished stream from past its end yields nothing",
      );
    },
  },
  {
    area: "streams",
    clause: "a reply of many chunks replays whole and in order from any position, finished or still running",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-long");
      const chunks = Array.from({ length: 300 }, (_, i) => `{"type":"text-delta","delta":"${i}"}`);
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
      for (let i = 0; i < 200; i += 50) await streams.append(sid, chunks.slice(i, i + 50), LEASE);
      // Followers of a running stream with more chunks than one read may take, then its live end.
      const running = [0, 1, 63, 64, 65, 199, 200].map((from) => ({
        from,
        seen: collect(streams.follow(sid, { from })),
      }));
      await sleep(5);
      await streams.append(sid, chunks.slice(200), LEASE);
      await streams.finish(sid, "done", { keepMs: KEEP });
      for (const { from, seen } of running)
        check.equal(await seen, chunks.slice(from), `a follower of the running stream from ${from}`);
      for (const from of [0, 1, 31, 32, 33, 63, 64, 65, 299, 300, 301])
        check.equal(
          await collect(streams.follow(sid, { from })),
          chunks.slice(from),
          `a follower of the finished stream from ${from}`,
        );
      // A consumer that stops after the first chunk ends the follower (and leaves the stream as it is).
      for await (const chunk of streams.follow(sid)) {
        check.equal(chunk, chunks[0], "the first chunk of the replay");
        break;
      }
      check.equal((await streams.read(sid, { from: 0 }))?.chunks, chunks, "read returns every chunk");
    },
  },
  {
    area: "streams",
    clause: "a follower ends when its signal aborts, and when the writer's lease passes without a finish",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-abort");
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
      await streams.append(sid, ["x"], LEASE);
      const controller = new AbortController();
      const seen: string[] = [];
      const following = (async () => {
        for await (const chunk of streams.follow(sid, { signal: controller.signal })) {
          seen.push(chunk);
          if (seen.length === 1) setTimeout(() => controller.abort(), 20);
        }
      })();
      await following;
      check.equal(seen, ["x"], "the aborted follower yielded what was there and ended without an error");
      check.equal((await streams.info(sid))?.status, "running", "aborting a follower leaves the stream running");

      const dying = id("stream-dying");
      await streams.open(dying, { sessionId: id("chat"), leaseMs: 150 });
      await streams.append(dying, ["before the writer died"], 150);
      check.equal(
        await collect(streams.follow(dying)),
        ["before the writer died"],
        "a follower of a writer that stops renewing yields its chunks and ends once the lease passes",
      );
    },
  },
  {
    area: "streams",
    clause: "finish sets each final status once; writes after it are StreamClosedError and change nothing",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      for (const status of ["done", "stopped", "failed", "interrupted"] as const) {
        const sid = id(`stream-${status}`);
        await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
        await streams.append(sid, ["one"], LEASE);
        check.equal(
          await streams.finish(sid, status, { keepMs: KEEP }),
          true,
          `finish(${status}) ends a running stream`,
        );
        check.equal((await streams.info(sid))?.status, status, `info says ${status}`);
        check.equal(await streams.finish(sid, "done", { keepMs: KEEP }), false, "a second finish returns false");
        check.equal((await streams.info(sid))?.status, status, "a second finish does not change the status");
        const error = await check.rejects(
          streams.append(sid, ["two"], LEASE),
          StreamClosedError,
          `append after finish(${status})`,
        );
        check.equal([error.code, error.status], ["stream-closed", status], "the error's code and the stream's status");
        await check.rejects(streams.renew(sid, LEASE), StreamClosedError, `renew after finish(${status})`);
        check.equal(await streams.requestStop(sid), false, "requestStop of a finished stream returns false");
        check.equal(
          (await streams.read(sid, { from: 0 }))?.chunks,
          ["one"],
          "the refused writes left the chunks as they were",
        );
      }
    },
  },
  {
    area: "streams",
    clause: "requestStop is seen by the writer's next append and renew, from the store",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-stop");
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
      check.equal((await streams.renew(sid, LEASE)).stopRequested, false, "renew before any stop");
      check.equal(await streams.requestStop(sid), true, "requestStop of a running stream returns true");
      check.equal(
        await streams.append(sid, ["partial"], LEASE),
        { length: 1, stopRequested: true },
        "append after the stop",
      );
      check.equal(await streams.renew(sid, LEASE), { length: 1, stopRequested: true }, "renew after the stop");
      check.equal((await streams.info(sid))?.stopRequested, true, "info says a stop was requested");
      check.equal((await streams.info(sid))?.status, "running", "a stop request alone does not end the stream");
      check.equal(await streams.finish(sid, "stopped", { keepMs: KEEP }), true, "the writer ends it as stopped");
    },
  },
  {
    area: "streams",
    clause: "finish with onlyIfAbandoned ends a stream only once its writer's lease has passed",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const live = id("stream-live-lease");
      await streams.open(live, { sessionId: id("chat"), leaseMs: LEASE });
      await streams.append(live, ["a"], LEASE);
      check.equal(
        await streams.finish(live, "interrupted", { keepMs: KEEP, onlyIfAbandoned: true }),
        false,
        "a recovering process cannot end a stream whose lease is current",
      );
      check.equal((await streams.append(live, ["b"], LEASE)).length, 2, "its writer goes on writing");

      const dead = id("stream-dead-lease");
      await streams.open(dead, { sessionId: id("chat"), leaseMs: 100 });
      await streams.append(dead, ["a"], 100);
      await sleep(250);
      const info = await streams.info(dead);
      check.equal(info?.status, "running", "a stream past its lease is still running until someone ends it");
      check.atMost(info!.leaseExpiresAt, Date.now(), "its leaseExpiresAt has passed");
      check.equal(
        await streams.finish(dead, "interrupted", { keepMs: KEEP, onlyIfAbandoned: true }),
        true,
        "a recovering process ends a stream whose lease passed",
      );
      check.equal((await streams.info(dead))?.status, "interrupted", "it is interrupted");
      const error = await check.rejects(
        streams.append(dead, ["late"], 100),
        StreamClosedError,
        "the late writer's append after the takeover",
      );
      check.equal(error.status, "interrupted", "the late writer learns it was interrupted");
      check.equal((await streams.read(dead, { from: 0 }))?.chunks, ["a"], "the late append wrote nothing");
    },
  },
  {
    area: "streams",
    clause:
      "after an append the lease ends between nine tenths of leaseMs and leaseMs later; renew sets it to leaseMs later",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-lease-bounds");
      // The store's clock may be a server's: a little slack for its rounding.
      const slack = 50;
      /** The lease after `write`, within [before + least, after + most]. */
      const leaseAfter = async (what: string, least: number, most: number, write: () => Promise<unknown>) => {
        const before = Date.now();
        await write();
        const after = Date.now();
        const lease = (await streams.info(sid))!.leaseExpiresAt;
        check.atMost(before + least - slack, lease, `${what}: the lease ends no earlier than ${least} ms after it`);
        check.atMost(lease, after + most + slack, `${what}: the lease ends no later than ${most} ms after it`);
      };
      await leaseAfter("open", LEASE, LEASE, () => streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE }));
      await leaseAfter("an append", LEASE - LEASE / 10, LEASE, () => streams.append(sid, ["a"], LEASE));
      await leaseAfter("a renew with a shorter lease", 20_000, 20_000, () => streams.renew(sid, 20_000));
      await leaseAfter("an append after it", LEASE - LEASE / 10, LEASE, () => streams.append(sid, ["b"], LEASE));
      await leaseAfter("an append with a shorter lease", 9_000, 10_000, () => streams.append(sid, ["c"], 10_000));
      await leaseAfter("an empty append", LEASE, LEASE, () => streams.append(sid, [], LEASE));
      check.equal((await streams.read(sid, { from: 0 }))?.chunks, ["a", "b", "c"], "the chunks");
    },
  },
  {
    area: "streams",
    clause: "opening a stream id that exists is a ConflictError and changes nothing",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-dup");
      const session = id("chat");
      await streams.open(sid, { sessionId: session, leaseMs: LEASE });
      await streams.append(sid, ["kept"], LEASE);
      const other = id("other");
      await check.rejects(
        streams.open(sid, { sessionId: other, leaseMs: LEASE, chunks: ["intruder"] }),
        ConflictError,
        "a second open",
      );
      // Nothing of the refused open is left under its session (a backend that opens first and
      // checks the id after must take its open back).
      check.equal(await streams.deleteForSession(other), 0, "streams left under the refused open's session");
      await streams.finish(sid, "done", { keepMs: KEEP });
      await check.rejects(
        streams.open(sid, { sessionId: session, leaseMs: LEASE }),
        ConflictError,
        "an open after finish",
      );
      const read = await streams.read(sid, { from: 0 });
      check.equal(
        [read?.chunks, read?.info.sessionId, read?.info.status],
        [["kept"], session, "done"],
        "the stream as it was",
      );
    },
  },
  {
    area: "streams",
    clause: "an absent stream: info and read undefined, follow yields nothing, writes are StreamClosedError",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-absent");
      check.equal(await streams.info(sid), undefined, "info");
      check.equal(await streams.read(sid, { from: 0 }), undefined, "read");
      check.equal(await collect(streams.follow(sid)), [], "follow");
      check.equal(await streams.requestStop(sid), false, "requestStop");
      check.equal(await streams.finish(sid, "done", { keepMs: KEEP }), false, "finish");
      const error = await check.rejects(streams.append(sid, ["x"], LEASE), StreamClosedError, "append");
      check.equal(error.status, undefined, "the error says the stream does not exist (status undefined)");
      await check.rejects(streams.renew(sid, LEASE), StreamClosedError, "renew");
      check.equal(await streams.info(sid), undefined, "the refused writes created nothing");
      check.equal(await streams.deleteForSession(id("nobody")), 0, "deleteForSession of a session without streams");
    },
  },
  {
    area: "streams",
    clause: "bad arguments are refused with a ConfigurationError and write nothing",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const sid = id("stream-bad");
      await check.rejects(streams.open("", { sessionId: id("chat"), leaseMs: LEASE }), ConfigurationError, "empty id");
      await check.rejects(streams.open(sid, { sessionId: id("chat"), leaseMs: 0 }), ConfigurationError, "leaseMs 0");
      await check.rejects(streams.open(sid, { sessionId: "", leaseMs: LEASE }), ConfigurationError, "empty sessionId");
      check.equal(await streams.info(sid), undefined, "refused opens created nothing");
      await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
      for (const [bad, what] of [
        [[1], "a number"],
        [["ok", "nul \0 inside"], "a NUL"],
        [["lone \ud800 surrogate"], "a lone surrogate"],
      ] as const) {
        await check.rejects(
          streams.append(sid, bad as unknown as string[], LEASE),
          ConfigurationError,
          `a chunk with ${what}`,
        );
      }
      await check.rejects(streams.append(sid, ["x"], -1), ConfigurationError, "a negative lease");
      await check.rejects(
        streams.finish(sid, "running" as never, { keepMs: KEEP }),
        ConfigurationError,
        "finish with status running",
      );
      await check.rejects(streams.read(sid, { from: -1 }), ConfigurationError, "read from -1");
      const read = await streams.read(sid, { from: 0 });
      check.equal([read?.chunks, read?.info.status], [[], "running"], "nothing was appended or finished");
    },
  },
  {
    area: "streams",
    clause: "streams are isolated from each other, within a session and across sessions",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const chatA = id("chat-a");
      const chatB = id("chat-b");
      const [a1, a2, b1] = [id("stream-a1"), id("stream-a2"), id("stream-b1")];
      await streams.open(a1, { sessionId: chatA, leaseMs: LEASE });
      await streams.open(a2, { sessionId: chatA, leaseMs: LEASE });
      await streams.open(b1, { sessionId: chatB, leaseMs: LEASE });
      const followA1 = collect(streams.follow(a1));
      await streams.append(a1, ["a1-0"], LEASE);
      await streams.append(a2, ["a2-0", "a2-1"], LEASE);
      await streams.append(b1, ["b1-0"], LEASE);
      await streams.append(a1, ["a1-1"], LEASE);
      await streams.requestStop(a2);
      await streams.finish(a1, "done", { keepMs: KEEP });
      check.equal(await followA1, ["a1-0", "a1-1"], "a follower sees only its stream's chunks");
      check.equal((await streams.read(a2, { from: 0 }))?.chunks, ["a2-0", "a2-1"], "the other stream of the session");
      check.equal((await streams.read(b1, { from: 0 }))?.chunks, ["b1-0"], "the stream of another session");
      check.equal(
        [(await streams.info(a2))?.stopRequested, (await streams.info(b1))?.stopRequested],
        [true, false],
        "a stop request reaches only its stream",
      );
      check.equal((await streams.info(a2))?.status, "running", "finishing one stream leaves the others running");
      check.equal((await streams.info(b1))?.sessionId, chatB, "each stream names its own session");
    },
  },
  {
    area: "streams",
    clause: "deleteForSession and store.delete remove the session's streams (and end their followers), nothing else",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const [chatA, chatB] = [id("chat-del-a"), id("chat-del-b")];
      const [a1, a2, b1] = [id("stream-del-a1"), id("stream-del-a2"), id("stream-del-b1")];
      await streams.open(a1, { sessionId: chatA, leaseMs: LEASE });
      await streams.open(a2, { sessionId: chatA, leaseMs: LEASE });
      await streams.open(b1, { sessionId: chatB, leaseMs: LEASE });
      await streams.append(a1, ["x"], LEASE);
      await streams.finish(a2, "done", { keepMs: KEEP });
      await streams.append(b1, ["y"], LEASE);
      // A follower that has the first chunk and waits for more when the stream is deleted.
      let gotFirst: () => void = () => undefined;
      const first = new Promise<void>((resolve) => {
        gotFirst = resolve;
      });
      const follower = (async () => {
        const seen: string[] = [];
        for await (const chunk of streams.follow(a1)) {
          seen.push(chunk);
          gotFirst();
        }
        return seen;
      })();
      await first;
      check.equal(await streams.deleteForSession(chatA), 2, "deleteForSession counts the session's streams");
      check.equal(
        [await streams.info(a1), await streams.info(a2)],
        [undefined, undefined],
        "the session's streams are gone",
      );
      check.equal(await streams.read(a1, { from: 0 }), undefined, "read of a deleted stream");
      check.equal(await follower, ["x"], "a follower of a deleted stream ends");
      check.equal((await streams.read(b1, { from: 0 }))?.chunks, ["y"], "another session's stream is kept");
      check.equal(await streams.deleteForSession(chatA), 0, "a second deleteForSession finds nothing");

      await store.save(counterSession(chatB), { expectedRevision: null });
      check.equal(await store.delete(chatB), true, "store.delete of the session");
      check.equal(await streams.info(b1), undefined, "store.delete removed the session's stream");
    },
  },
  {
    area: "streams",
    clause: "a finished stream is kept for keepMs, then gone (and purgeExpired removes it); running streams stay",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const [short, long, running] = [id("stream-short"), id("stream-long"), id("stream-running")];
      for (const sid of [short, long, running]) {
        await streams.open(sid, { sessionId: id("chat"), leaseMs: LEASE });
        await streams.append(sid, ["c"], LEASE);
      }
      // keepMs counts from the finish; a loaded machine can take longer than a short keepMs to
      // answer the next call, so "still there" is asserted only when the answer came in time.
      const shortKeepMs = 400;
      const finishing = Date.now();
      await streams.finish(short, "done", { keepMs: shortKeepMs });
      await streams.finish(long, "done", { keepMs: KEEP });
      const seen = (await streams.info(short))?.status;
      if (Date.now() - finishing < shortKeepMs) check.equal(seen, "done", "a finished stream is there within keepMs");
      await sleep(Math.max(0, finishing + shortKeepMs + 200 - Date.now()));
      const purged = await streams.purgeExpired();
      check.ok(Number.isSafeInteger(purged) && purged >= 0, "purgeExpired returns a count");
      check.equal(await streams.info(short), undefined, "a stream past its keepMs is gone");
      check.equal(await streams.read(short, { from: 0 }), undefined, "read of an expired stream");
      check.equal(await collect(streams.follow(short)), [], "follow of an expired stream");
      check.equal(await streams.purgeExpired(), 0, "a second purgeExpired finds nothing (of this store's, here)");
      check.equal((await streams.read(long, { from: 0 }))?.chunks, ["c"], "a stream within its keepMs is kept");
      check.equal((await streams.info(running))?.status, "running", "a running stream is kept");
      await streams.open(short, { sessionId: id("chat"), leaseMs: LEASE });
      check.equal((await streams.read(short, { from: 0 }))?.chunks, [], "an expired stream's id opens anew, empty");
    },
  },
  {
    area: "streams",
    clause: "eraseOwner removes the streams of the owner's sessions and counts them in the receipt",
    requires: ["streams", "listing"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      const owner = id("stream-owner");
      const other = id("stream-other-owner");
      const [chat1, chat2, kept] = [id("chat-e1"), id("chat-e2"), id("chat-kept")];
      await store.save(counterSession(chat1), { expectedRevision: null, meta: { owner } });
      await store.save(counterSession(chat2), { expectedRevision: null, meta: { owner } });
      await store.save(counterSession(kept), { expectedRevision: null, meta: { owner: other } });
      const [s1, s2, s3, sk] = [id("stream-e1"), id("stream-e2"), id("stream-e3"), id("stream-ek")];
      await streams.open(s1, { sessionId: chat1, owner, leaseMs: LEASE });
      await streams.open(s2, { sessionId: chat1, owner, leaseMs: LEASE });
      await streams.open(s3, { sessionId: chat2, owner, leaseMs: LEASE });
      await streams.open(sk, { sessionId: kept, owner: other, leaseMs: LEASE });
      for (const sid of [s1, s2, s3, sk]) await streams.append(sid, ["chunk"], LEASE);
      await streams.finish(s2, "done", { keepMs: KEEP });
      const receipt = await store.eraseOwner(owner);
      check.equal(
        [receipt.sessions, receipt.streams],
        [2, 3],
        "the receipt counts the sessions and the streams removed",
      );
      for (const sid of [s1, s2, s3])
        check.equal(await streams.info(sid), undefined, "an erased session's stream is gone");
      check.equal((await streams.read(sk, { from: 0 }))?.chunks, ["chunk"], "another owner's stream is kept");
      const again = await store.eraseOwner(owner);
      check.equal([again.sessions, again.streams], [0, 0], "a second erasure removes (and counts) nothing");
    },
  },
  {
    area: "streams",
    clause:
      "finishWith (where the buffer has it) leaves what append then finish would: the chunks after the others, the final status, followers ending after the last; a stream not running gets nothing",
    requires: ["streams"],
    async run({ store, id, check }) {
      const streams = streamsOf(store, check);
      // A buffer without finishWith gets the two calls (what the chat server falls back to).
      const finishWith = async (sid: string, chunks: string[], status: "done" | "stopped"): Promise<boolean> => {
        if (streams.finishWith) return streams.finishWith(sid, chunks, status, { keepMs: KEEP });
        try {
          await streams.append(sid, chunks, LEASE);
        } catch (error) {
          if (error instanceof StreamClosedError) return false;
          throw error;
        }
        return streams.finish(sid, status, { keepMs: KEEP });
      };
      const sid = id("stream-tail");
      const session = id("chat-tail");
      await streams.open(sid, { sessionId: session, leaseMs: LEASE });
      await streams.append(sid, ["a"], LEASE);
      const following = collect(streams.follow(sid));
      if (streams.finishWith)
        await check.rejects(
          streams.finishWith(sid, ["nul \0 inside"], "done", { keepMs: KEEP }),
          ConfigurationError,
          "a chunk with a NUL",
        );
      check.equal(
        [(await streams.read(sid, { from: 0 }))?.chunks, (await streams.info(sid))?.status],
        [["a"], "running"],
        "a refused finishWith wrote nothing and ended nothing",
      );
      check.equal(await finishWith(sid, ["b", "c"], "done"), true, "finishWith of a running stream ends it");
      check.equal(await following, ["a", "b", "c"], "a follower gets every chunk, then ends");
      const read = await streams.read(sid, { from: 0 });
      check.equal(
        [read?.chunks, read?.info.status, read?.info.length],
        [["a", "b", "c"], "done", 3],
        "the chunks and the final status",
      );
      check.equal(await finishWith(sid, ["late"], "stopped"), false, "finishWith of a finished stream");
      check.equal(
        [(await streams.read(sid, { from: 0 }))?.chunks, (await streams.info(sid))?.status],
        [["a", "b", "c"], "done"],
        "the finished stream as it was",
      );
      const absent = id("stream-tail-absent");
      check.equal(await finishWith(absent, ["x"], "done"), false, "finishWith of an absent stream");
      check.equal(await streams.info(absent), undefined, "nothing was created");
      const empty = id("stream-tail-empty");
      await streams.open(empty, { sessionId: session, leaseMs: LEASE, chunks: ["first"] });
      check.equal(await finishWith(empty, [], "stopped"), true, "finishWith without chunks ends the stream");
      const ended = await streams.read(empty, { from: 0 });
      check.equal([ended?.chunks, ended?.info.status], [["first"], "stopped"], "the stream kept its chunks");
    },
  },
];
