/**
 * Message-log entries: the fused message check agrees with today's path (a message validated as the
 * one message of a history state), and `defaultMessageCodec` holds a row to exactly what a session
 * load holds the same message to.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeSession } from "../../bench/sessions.js";
import { generatedTypes } from "../../src/generated/registry.js";
import { fusedLimits, fusedMessageDocument } from "../../src/runtime/validation/fused.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { checkedKeyCount, resolveLimits } from "../../src/runtime/json/safe-json.js";
import { deserializeSession } from "../../src/runtime/persistence/serialization.js";
import { SessionWalker } from "../../src/runtime/validation/validate.js";
import {
  InvalidStoredMessageError,
  defaultMessageCodec,
  messageCodec,
  serializeMessages,
} from "../../src/runtime/stores/codec.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";

const registry = defaultRegistry();
/** One valid value of every generated content type (the golden fixtures). */
const contents = generatedTypes
  .filter((t) => t.family === "AIContent")
  .map(
    (t) =>
      JSON.parse(
        readFileSync(new URL(`../fixtures/${t.$type}/v${t.version}.json`, import.meta.url), "utf8"),
      ) as unknown,
  );
const history = makeSession({ messages: 8, seed: 7 }).stateBag as Record<string, { messages?: unknown[] }>;
const sample = Object.values(history).find((v) => Array.isArray(v.messages))!.messages!;

const odd = fc.oneof(
  fc.constantFrom<unknown>(NaN, Number.POSITIVE_INFINITY, "yesterday", "2024-02-30T00:00:00Z", [], {}, null, 5, "x", {
    $type: "text",
    text: 1,
  }),
  fc.constantFrom<unknown>({ $type: "nope" }, { $type: "text", $version: 9, text: "a" }, JSON.parse('{"__proto__":1}')),
);
const messages = fc
  .record({
    base: fc.nat({ max: sample.length - 1 }),
    extra: fc.subarray(contents, { maxLength: 3 }),
    edits: fc.array(
      fc.record({
        key: fc.constantFrom(
          "role",
          "contents",
          "createdAt",
          "authorName",
          "messageId",
          "additionalProperties",
          "x",
          "__proto__",
        ),
        value: odd,
        drop: fc.boolean(),
      }),
      { maxLength: 2 },
    ),
  })
  .map(({ base, extra, edits }) => {
    const m = structuredClone(sample[base]) as Record<string, unknown>;
    for (const c of extra) (m.contents as unknown[]).push(structuredClone(c));
    for (const e of edits) {
      if (e.drop) delete m[e.key];
      else Object.defineProperty(m, e.key, { value: e.value, enumerable: true, writable: true, configurable: true });
    }
    return m;
  });

/** Today's path: the limits walk, then the walker on the message as the one message of a history state. */
function today(message: unknown): { asIs: boolean; keys: number } {
  let keys: number;
  try {
    keys = checkedKeyCount(message, resolveLimits({ protoKeys: "keep" }));
  } catch {
    return { asIs: false, keys: -1 };
  }
  const walker = new SessionWalker({ registry, collectUpgrades: true });
  walker.walkValue(
    {
      $type: "InMemoryChatHistoryState",
      $version: 3,
      messages: [message],
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    },
    "ProviderState",
    [],
  );
  const r = walker.result();
  return { asIs: r.ok && r.preserved.length === 0 && walker.upgrades!.length === 0, keys };
}

describe("the fused message check", () => {
  it("says yes only when today's path accepts the message as it is (and counts its keys and a text bound)", () => {
    const lim = fusedLimits(resolveLimits({ protoKeys: "keep" }), undefined, false)!;
    const seen = { yes: 0, no: 0 };
    fc.assert(
      fc.property(messages, (m) => {
        let text: string;
        let parsed: unknown;
        try {
          text = JSON.stringify(m);
          parsed = JSON.parse(text);
        } catch {
          return;
        }
        const counted = fusedMessageDocument(parsed, lim);
        seen[counted !== undefined ? "yes" : "no"]++;
        if (counted !== undefined) {
          const t = today(parsed);
          expect(t.asIs).toBe(true);
          expect(counted.keys).toBe(t.keys);
          expect(counted.chars).toBeLessThanOrEqual(text.length);
          // And the codec returns it as it is.
          expect(defaultMessageCodec.deserialize(text)).toEqual(parsed);
        }
      }),
      { numRuns: 500 },
    );
    expect(seen.yes).toBeGreaterThan(20);
    expect(seen.no).toBeGreaterThan(20);
  });

  it("decides a row as a session load decides the same message in a history", () => {
    fc.assert(
      fc.property(messages, (m) => {
        let text: string;
        try {
          text = JSON.stringify(m);
        } catch {
          return;
        }
        const session = `{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"h":{"$type":"InMemoryChatHistoryState","$version":3,"messages":[${text}],"droppedMessageCount":0,"branches":[],"branchPoints":[]}}}}`;
        let inSession: unknown;
        let sessionError: { problems: readonly { pointer: string; code: string }[] } | undefined;
        try {
          inSession = (deserializeSession(session).stateBag.h as unknown as { messages: unknown[] }).messages[0];
        } catch (e) {
          sessionError = e as never;
        }
        let row: unknown;
        try {
          row = defaultMessageCodec.deserialize(text, { logId: "L" });
        } catch (e) {
          expect(e).toBeInstanceOf(InvalidStoredMessageError);
          expect(sessionError).toBeDefined();
          const prefix = "/session/stateBag/h/messages/0";
          expect((e as InvalidStoredMessageError).problems.map((p) => [p.code, p.pointer])).toEqual(
            sessionError!.problems.map((p) => [
              p.code,
              p.pointer.startsWith(prefix) ? p.pointer.slice(prefix.length) : p.pointer,
            ]),
          );
          return;
        }
        expect(sessionError).toBeUndefined();
        expect(row).toEqual(inSession);
      }),
      { numRuns: 400 },
    );
  });
});

describe("defaultMessageCodec on hostile rows", () => {
  const ctx = { logId: "log-7", seq: 4 };
  const refused = (text: string, pointer: string, codec = defaultMessageCodec) => {
    let error: unknown;
    try {
      codec.deserialize(text, ctx);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidStoredMessageError);
    const e = error as InvalidStoredMessageError;
    expect(e.code).toBe("invalid-message");
    expect(e.logId).toBe("log-7");
    expect(e.seq).toBe(4);
    expect(e.pointer).toBe(pointer);
    expect(e.message).toContain('message log "log-7" at position 4');
    expect(e.hint).toContain("getMessages(id, { last })");
    return e;
  };

  it("refuses duplicate keys, a __proto__ member, nesting past the limit and a bad date-time", () => {
    refused('{"role":"user","contents":[],"role":"assistant"}', "/role");
    refused('{"role":"user","contents":[],"__proto__":{"polluted":true}}', "/__proto__");
    const deep = `{"role":"user","contents":[],"additionalProperties":{"a":${"[".repeat(300)}${"]".repeat(300)}}}`;
    // The message is level 1: the first array past level 256 sits under 254 others.
    expect(refused(deep, `/additionalProperties/a${"/0".repeat(254)}`).message).toContain("limits.maxDepth");
    const bad = refused('{"role":"user","contents":[],"createdAt":"2024-02-30T10:00:00Z"}', "/createdAt");
    expect(bad.message).not.toContain("InMemoryChatHistoryState");
    expect(bad.message).not.toContain("2024-02-30T10:00:00Zx");
    refused('{"role":"user","contents":[{"$type":"text","text":5}]}', "/contents/0/text");
    refused("[1]", "");
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("keeps an unknown content type verbatim, as a session load does; strict refuses it", () => {
    const text = '{"role":"user","contents":[{"$type":"vendor.Thing","x":1}]}';
    expect(defaultMessageCodec.deserialize(text)).toEqual(JSON.parse(text));
    refused(text, "/contents/0", messageCodec({ strict: true }));
  });

  it("round-trips a valid message text byte for byte", () => {
    for (const m of sample) {
      const text = defaultMessageCodec.serialize(m as never);
      expect(text).toBe(JSON.stringify(m));
      expect(defaultMessageCodec.serialize(defaultMessageCodec.deserialize(text))).toBe(text);
    }
  });

  it("refuses on write what a read would refuse: bad date-time, NaN, unknown keys", () => {
    for (const m of [
      { role: "user", contents: [], createdAt: "not a date" },
      { role: "user", contents: [{ $type: "usage", details: { inputTokenCount: Number.NaN } }] },
      { role: "user", contents: [], extra: 1 },
    ])
      expect(() => defaultMessageCodec.serialize(m as never, ctx)).toThrow(InvalidStoredMessageError);
  });

  it("an append names the refused message's place in the batch, with the typed error, and writes nothing", async () => {
    const batch = [sample[0], { role: "user", contents: [], createdAt: "yesterday" }, sample[1]] as never[];
    let error: unknown;
    try {
      serializeMessages(defaultMessageCodec, batch, { logId: "log-9" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidStoredMessageError);
    const e = error as InvalidStoredMessageError;
    expect(e).toMatchObject({ direction: "write", logId: "log-9", pointer: "/createdAt", batch: { index: 1, of: 3 } });
    expect(e.message).toMatch(/^message 1 of 3 for message log "log-9" cannot be written \(at "\/createdAt"/);
    const store = new MemorySessionStore();
    await expect(store.messages.appendMessages("log-9", batch, { operationId: "op" })).rejects.toBeInstanceOf(
      InvalidStoredMessageError,
    );
    expect(await store.messages.getMessages("log-9")).toEqual([]);
  });
});
