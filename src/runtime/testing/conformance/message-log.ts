/** The contract on `store.messages`: ordered, idempotent appends; checked replacement and trimming. */
import { ConfigurationError, type ChatMessage } from "../../../index.js";
import { ConflictError, defaultMessageCodec, type MessageCodec } from "../../../stores.js";
import { texts, user, type ContractCase } from "./case.js";

/** Writes a message with the role "hostile" as a row no reader may accept (a duplicate key); reads with the default codec. */
const smuggling: MessageCodec = {
  serialize: (m, context) =>
    m.role === "hostile"
      ? '{"role":"user","role":"assistant","contents":[]}'
      : defaultMessageCodec.serialize(m, context),
  deserialize: (text, context) => defaultMessageCodec.deserialize(text, context),
};

export const messageLogCases: ContractCase[] = [
  {
    area: "codec",
    clause:
      "a message-log row that breaks the message rules (smuggled in by the injected message codec) is refused on read, naming the log; the other rows stay readable",
    requires: ["messageLog", "codec"],
    async run({ open, close, id, check }) {
      const store = await open({ messageCodec: smuggling });
      try {
        const sid = id("log-hostile");
        await store.messages.appendMessages(sid, [user("a"), { role: "hostile", contents: [] }, user("c")], {
          operationId: "turn-1",
        });
        let error: unknown;
        try {
          await store.messages.getMessages(sid);
        } catch (e) {
          error = e;
        }
        const refused = error as { code?: string; message?: string; pointer?: string } | undefined;
        check.equal(
          refused?.code,
          "invalid-message",
          "reading a log with an invalid row must throw an invalid-message error",
        );
        check.equal(refused?.pointer, "/role", "the error must point into the message");
        check.equal(refused?.message?.includes(JSON.stringify(sid)) === true, true, "the error must name the log id");
        check.equal(
          texts(await store.messages.getMessages(sid, { last: 1 })),
          ["c"],
          "the rows after the invalid one must stay readable",
        );
      } finally {
        await close(store);
      }
    },
  },
  {
    area: "message log",
    clause: "a message that breaks the message rules is refused on append, and the log is unchanged",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const sid = id("log-refused");
      await store.messages.appendMessages(sid, [user("a")], { operationId: "turn-1" });
      let error: unknown;
      try {
        await store.messages.appendMessages(
          sid,
          [user("b"), { role: "user", contents: [], createdAt: "yesterday" } as ChatMessage],
          { operationId: "turn-2" },
        );
      } catch (e) {
        error = e;
      }
      check.equal((error as { code?: string } | undefined)?.code, "invalid-message", "the append must be refused");
      check.equal(texts(await store.messages.getMessages(sid)), ["a"], "a refused append must add nothing");
    },
  },
  {
    area: "message log",
    clause: "appends in order and is idempotent per operation id",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      const sid = id("log");
      check.equal(await log.getMessages(sid), [], "getMessages of a log never written must be []");
      check.equal(
        await log.readMessages(sid),
        { messages: [], version: 0 },
        "readMessages of a log never written must be { messages: [], version: 0 }",
      );
      const first = await log.appendMessages(sid, [user("a"), user("b")], { operationId: "turn-1" });
      check.equal(first.applied, true, "a first append must be applied");
      const again = await log.appendMessages(sid, [user("a"), user("b")], { operationId: "turn-1" });
      check.equal(
        again,
        { applied: false, version: first.version },
        "an append retried with the same operationId must not apply, and return the current version",
      );
      const second = await log.appendMessages(sid, [user("c")], { operationId: "turn-2" });
      check.greater(second.version, first.version, "each applied append must increase the version");
      check.equal(
        texts(await log.getMessages(sid)),
        ["a", "b", "c"],
        "getMessages must return every appended message once, oldest first",
      );
      check.equal(
        texts(await log.getMessages(sid, { last: 2 })),
        ["b", "c"],
        "getMessages({ last: 2 }) must return the newest two, oldest first",
      );
      check.equal(await log.getMessages(sid, { last: 0 }), [], "getMessages({ last: 0 }) must return []");
      check.equal(
        await log.getMessages(sid),
        [user("a"), user("b"), user("c")],
        "messages must load equal to what was appended",
      );
      const snapshot = await log.readMessages(sid);
      check.equal(snapshot.version, second.version, "readMessages' version must be the last append's");
      check.equal(texts(snapshot.messages), ["a", "b", "c"], "readMessages must return the messages");
      check.equal(await log.getMessages(id("other-log")), [], "another id's log must be separate");
    },
  },
  {
    area: "message log",
    clause: "concurrent appends all land once, retried ones are not duplicated",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      const sid = id("log-concurrent");
      const ops = Array.from({ length: 20 }, (_, i) => i);
      const results = await Promise.all(
        [...ops, ...ops.slice(0, 8)].map((i) =>
          log.appendMessages(sid, [user(`m${i}-1`), user(`m${i}-2`)], { operationId: `op-${i}` }),
        ),
      );
      check.equal(
        results.filter((r) => r.applied).length,
        20,
        "of 28 concurrent appends with 20 distinct operation ids, exactly 20 must be applied",
      );
      const got = texts(await log.getMessages(sid));
      check.equal(got.length, 40, "20 applied appends of 2 messages must leave 40 messages");
      check.equal(new Set(got).size, 40, "no message may be duplicated");
      for (const op of ops)
        check.equal(
          got.indexOf(`m${op}-2`),
          got.indexOf(`m${op}-1`) + 1,
          `the messages of one append (op-${op}) must stay together and in order`,
        );
    },
  },
  {
    area: "message log",
    clause: "replaces and trims for reduction, with a version check",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      const sid = id("log-reduce");
      for (let i = 0; i < 6; i++) await log.appendMessages(sid, [user(`m${i}`)], { operationId: `t${i}` });
      const seen = await log.readMessages(sid);
      await log.appendMessages(sid, [user("late")], { operationId: "late" });
      await check.rejects(
        log.replaceMessages(sid, [user("summary")], { expectedVersion: seen.version }),
        ConflictError,
        "replaceMessages with a stale expectedVersion must throw ConflictError naming the message log",
        "message log",
      );
      check.equal(texts(await log.getMessages(sid)).length, 7, "a conflicting replaceMessages must change nothing");
      const fresh = await log.readMessages(sid);
      const replaced = await log.replaceMessages(sid, [user("summary"), ...fresh.messages.slice(-2)], {
        expectedVersion: fresh.version,
        operationId: "reduce-1",
      });
      check.greater(replaced, fresh.version, "replaceMessages must return a greater version");
      check.equal(
        await log.replaceMessages(sid, [user("again")], { operationId: "reduce-1" }),
        replaced,
        "replaceMessages retried with the same operationId must not apply, and return the current version",
      );
      check.equal(
        texts(await log.getMessages(sid)),
        ["summary", "m5", "late"],
        "replaceMessages must replace the whole log",
      );
      await log.appendMessages(sid, [user("after")], { operationId: "after" });
      check.equal(
        texts(await log.getMessages(sid)),
        ["summary", "m5", "late", "after"],
        "appends after a replacement must go at the end",
      );
      check.equal(
        texts(await log.getMessages(sid, { last: 1 })),
        ["after"],
        "getMessages({ last: 1 }) after a replacement",
      );
      check.equal(
        (await log.appendMessages(sid, [user("m0")], { operationId: "t0" })).applied,
        false,
        "an append retried from before a replacement must still not apply (operation ids outlive replaceMessages)",
      );
      check.equal(
        await log.trimMessages(sid, { keepLast: 2 }),
        2,
        "trimMessages({ keepLast: 2 }) of 4 messages must return 2 (how many it removed)",
      );
      check.equal(
        texts(await log.getMessages(sid)),
        ["late", "after"],
        "trimMessages must keep the newest keepLast messages",
      );
      check.equal(
        await log.trimMessages(sid, { keepLast: 5 }),
        0,
        "trimMessages keeping more than there are must remove nothing",
      );
      const before = await log.readMessages(sid);
      await check.rejects(
        log.trimMessages(sid, { keepLast: 0, expectedVersion: before.version - 1 }),
        ConflictError,
        "trimMessages with a stale expectedVersion must throw ConflictError",
      );
      check.equal(
        await log.trimMessages(sid, { keepLast: 0, expectedVersion: before.version }),
        2,
        "trimMessages with the current expectedVersion must trim",
      );
      check.equal(await log.getMessages(sid), [], "trimMessages({ keepLast: 0 }) must empty the log");
      await log.appendMessages(sid, [user("z")], { operationId: "z" });
      check.equal(texts(await log.getMessages(sid)), ["z"], "an emptied log must take appends");
      check.greater(
        await log.replaceMessages(id("log-new"), [user("x")], { expectedVersion: 0 }),
        0,
        "replaceMessages of an absent log expecting version 0 must create it",
      );
    },
  },
  {
    area: "message log",
    clause: "deletes a log with its operation ids",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      const sid = id("log-delete");
      await log.appendMessages(sid, [user("a")], { operationId: "op" });
      check.equal(await log.deleteMessages(sid), true, "deleteMessages of an existing log must return true");
      check.equal(
        await log.readMessages(sid),
        { messages: [], version: 0 },
        "a deleted log must read as never written",
      );
      check.equal(await log.deleteMessages(sid), false, "deleteMessages of an absent log must return false");
      check.equal(
        (await log.appendMessages(sid, [user("b")], { operationId: "op" })).applied,
        true,
        "deleteMessages must forget the log's operation ids",
      );
      check.equal(texts(await log.getMessages(sid)), ["b"], "a re-created log must hold only new messages");
    },
  },
  {
    area: "message log",
    clause: "refuses an invalid message without consuming the operation id",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      const sid = id("log-invalid");
      const bad = { contents: [] } as unknown as ChatMessage;
      await check.rejects(
        log.appendMessages(sid, [user("ok"), bad], { operationId: "op" }),
        undefined,
        "an append with an invalid message must throw, naming its position",
        /message 1/,
      );
      check.equal(
        await log.getMessages(sid),
        [],
        "an append refused by validation must append nothing (not even the valid messages)",
      );
      check.equal(
        (await log.appendMessages(sid, [user("ok")], { operationId: "op" })).applied,
        true,
        "a refused append must not consume its operation id",
      );
      await check.rejects(
        log.appendMessages(sid, [user("x")], {} as never),
        ConfigurationError,
        "appendMessages without an operationId must throw ConfigurationError",
      );
    },
  },
  {
    area: "message log",
    clause: "reads a window (newest messages, or from a position) with the log's version and length",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      if (!log.readMessageWindow) return; // optional: callers fall back to readMessages
      const sid = id("log-window");
      check.equal(
        await log.readMessageWindow(sid, { last: 3 }),
        { messages: [], version: 0, length: 0, ...(store.kind === "redis" ? {} : { end: 0 }) },
        "the window of a log never written must be empty, at version 0",
      );
      for (let i = 0; i < 6; i++) await log.appendMessages(sid, [user(`m${i}`)], { operationId: `t${i}` });
      const full = await log.readMessages(sid);
      const window = await log.readMessageWindow(sid, { last: 2 });
      check.equal(
        texts(window.messages),
        ["m4", "m5"],
        "readMessageWindow({ last: 2 }) must return the newest two, oldest first",
      );
      check.equal(
        [window.version, window.length],
        [full.version, 6],
        "a window must carry the log's version and its whole length",
      );
      check.equal(
        texts((await log.readMessageWindow(sid, { last: 10 })).messages),
        ["m0", "m1", "m2", "m3", "m4", "m5"],
        "a window larger than the log must return the whole log",
      );
      check.equal(
        (await log.readMessageWindow(sid, { last: 0 })).messages,
        [],
        "readMessageWindow({ last: 0 }) must return no messages",
      );
      if (window.end === undefined) return; // a backend without positions (Redis)
      const end = window.end;
      check.equal(
        texts((await log.readMessageWindow(sid, { from: end - 1 })).messages),
        ["m5"],
        "readMessageWindow({ from: end - 1 }) must return the newest message",
      );
      await log.appendMessages(sid, [user("m6"), user("m7")], { operationId: "t6" });
      const grown = await log.readMessageWindow(sid, { from: end });
      check.equal(
        [texts(grown.messages), grown.end, grown.length],
        [["m6", "m7"], end + 2, 8],
        "after an append, the window from the old end must be exactly what was appended",
      );
      await log.trimMessages(sid, { keepLast: 3 });
      const trimmed = await log.readMessageWindow(sid, { from: 0 });
      check.equal(
        [texts(trimmed.messages), trimmed.end, trimmed.length],
        [["m5", "m6", "m7"], end + 2, 3],
        "a trim must keep the end and shorten the length (positions are not renumbered)",
      );
      await log.replaceMessages(sid, [user("s"), user("r")]);
      const replaced = await log.readMessageWindow(sid, { last: 5 });
      check.equal(
        [texts(replaced.messages), replaced.length],
        [["s", "r"], 2],
        "after a replacement the window must hold only the new messages",
      );
      check.ok(
        replaced.end! - replaced.length >= end + 2,
        "a replacement must not reuse the positions of the messages it removed",
      );
      await log.deleteMessages(sid);
      check.equal(
        await log.readMessageWindow(sid, { from: 0 }),
        { messages: [], version: 0, length: 0, end: 0 },
        "a deleted log's window must read as never written",
      );
    },
  },
  {
    area: "message log",
    clause:
      "reads a range of messages by index (what a branched history reads its active path with), with the log's version and length",
    requires: ["messageLog"],
    async run({ store, id, check }) {
      const log = store.messages;
      if (!log.readMessageRange) return; // optional: callers fall back to readMessages
      const sid = id("log-range");
      const empty = await log.readMessageRange(sid, { start: 0, count: 3 });
      check.equal(
        [empty.messages, empty.version, empty.length],
        [[], 0, 0],
        "the range of a log never written must be empty, at version 0",
      );
      for (let i = 0; i < 6; i++) await log.appendMessages(sid, [user(`m${i}`)], { operationId: `t${i}` });
      const full = await log.readMessages(sid);
      const range = await log.readMessageRange(sid, { start: 2, count: 3 });
      check.equal(
        texts(range.messages),
        ["m2", "m3", "m4"],
        "readMessageRange({ start: 2, count: 3 }) must return m2..m4",
      );
      check.equal(
        [range.version, range.length],
        [full.version, 6],
        "a range must carry the log's version and its whole length",
      );
      check.equal(
        texts((await log.readMessageRange(sid, { start: 4, count: 10 })).messages),
        ["m4", "m5"],
        "a range past the log's end must stop at its end",
      );
      check.equal(
        (await log.readMessageRange(sid, { start: 9, count: 2 })).messages,
        [],
        "a range after the log's end must be empty",
      );
      check.equal(
        (await log.readMessageRange(sid, { start: 1, count: 0 })).messages,
        [],
        "a range of no messages must be empty",
      );
      await log.appendMessages(sid, [user("m6")], { operationId: "t6" });
      check.equal(
        texts((await log.readMessageRange(sid, { start: 0, count: 2 })).messages),
        ["m0", "m1"],
        "an append must not move the indexes of the messages already there",
      );
      await log.trimMessages(sid, { keepLast: 3 });
      check.equal(
        texts((await log.readMessageRange(sid, { start: 0, count: 2 })).messages),
        ["m4", "m5"],
        "after a trim, index 0 must be the oldest message kept",
      );
      await log.replaceMessages(sid, [user("s"), user("r")]);
      check.equal(
        texts((await log.readMessageRange(sid, { start: 1, count: 5 })).messages),
        ["r"],
        "after a replacement the indexes must count the new messages from 0",
      );
      let refused = false;
      try {
        await log.readMessageRange(sid, { start: -1, count: 1 });
      } catch (error) {
        refused = (error as { code?: unknown }).code === "configuration";
      }
      check.ok(refused, "a negative start must be refused with a configuration error");
      await log.deleteMessages(sid);
    },
  },
];
