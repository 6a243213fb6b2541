import { describe, expect, it } from "vitest";
import { StatebagError } from "../../src/runtime/core/errors.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { JsonParseError } from "../../src/runtime/json/safe-json.js";
import {
  SessionValidationError,
  deserializeSession,
  deserializeSessions,
  serializeSession,
  serializeSessions,
} from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import type { ValidationProblem } from "../../src/runtime/core/problems.js";
import { makeModelTypes } from "./model.js";

const registry = new TypeRegistry({ source: "test model", types: makeModelTypes() });

function env(session: unknown, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ format: "statebag.session", formatVersion: 1, session, ...extra });
}

function history(...contents: unknown[]): Record<string, unknown> {
  return { $type: "InMemoryChatHistoryState", messages: [{ role: "user", contents }] };
}

function loadError(input: unknown, options: Parameters<typeof deserializeSession>[1] = {}): SessionValidationError {
  try {
    deserializeSession(input, { registry, ...options });
  } catch (err) {
    expect(err).toBeInstanceOf(SessionValidationError);
    expect(err).toBeInstanceOf(StatebagError);
    return err as SessionValidationError;
  }
  throw new Error("expected deserializeSession to throw");
}

const brief = (ps: readonly ValidationProblem[]) => ps.map((p) => [p.code, p.pointer]);

describe("input errors", () => {
  it("malformed JSON: one problem with line:column and snippet; the JsonParseError is the cause", () => {
    const err = loadError('{"format": "statebag.session",\n "formatVersion": 1\n "session": {}}');
    expect(brief(err.problems)).toEqual([["json", ""]]);
    expect(err.message).toContain("malformed JSON at line 3, column 2");
    expect(err.message).toContain('3 |  "session": {}}');
    expect(err.cause).toBeInstanceOf(JsonParseError);
  });

  it("oversize and too deep documents", () => {
    const big = env({ id: "x", stateBag: { h: history({ $type: "text", text: "y".repeat(5000) }) } });
    const tooBig = loadError(big, { limits: { maxBytes: 4096 } });
    expect(tooBig.problems[0].code).toBe("json");
    expect(tooBig.message).toMatch(/over the limit of 4 KiB/);
    const deep = env({
      id: "x",
      stateBag: {
        h: history({ $type: "functionResult", callId: "c", result: JSON.parse("[".repeat(300) + "]".repeat(300)) }),
      },
    });
    const tooDeep = loadError(deep);
    expect(tooDeep.problems[0].message).toMatch(/deeper than the limit of 256/);
    expect(tooDeep.problems[0].pointer.startsWith("/session/stateBag/h/messages/0/contents/0/result/0/0")).toBe(true);
    // the same limits apply to an already-parsed object
    expect(loadError(JSON.parse(deep)).problems[0].code).toBe("json");
  });

  it("a 100,000-deep document is a clear error, not a stack overflow", () => {
    const err = loadError("[".repeat(100_000) + "]".repeat(100_000));
    expect(err.problems[0].message).toMatch(/deeper than the limit/);
  });

  it("a 100,000-deep in-memory object is stopped by the JSON limits, with a short message and an exact pointer", () => {
    let inner: unknown = [];
    for (let i = 0; i < 100_000; i++) inner = [inner];
    const doc = {
      format: "statebag.session",
      formatVersion: 1,
      session: { id: "x", stateBag: { h: history({ $type: "functionResult", callId: "c", result: inner }) } },
    };
    const err = loadError(doc);
    expect(brief(err.problems).map(([code]) => code)).toEqual(["json"]);
    const pointer = err.problems[0].pointer;
    expect(pointer.startsWith("/session/stateBag/h/messages/0/contents/0/result/0/0")).toBe(true);
    expect(pointer.split("/").length - 1).toBeGreaterThan(250);
    expect(err.message).not.toContain(pointer);
    expect(err.message).toMatch(/at \/session\/stateBag\/h\/messages\/0\/contents\/…\(\d+ more\)…\/0\/0\/0/);
    expect(err.message.length).toBeLessThan(600);
  });

  it("a long pointer from the walker is shortened in messages and kept exact in `pointer`", () => {
    // Tagged values nested 100,000 deep, under raised parse limits: the walker stops at maxNesting.
    let call: Record<string, unknown> = { $type: "functionCall", callId: "c", name: "f" };
    for (let i = 0; i < 100_000; i++) call = { $type: "toolApprovalRequest", requestId: "r" + i, toolCall: call };
    const doc = { format: "statebag.session", formatVersion: 1, session: { id: "x", stateBag: { h: history(call) } } };
    const err = loadError(doc, { limits: { maxDepth: 200_000 } });
    expect(err.problems.map((p) => p.code)).toEqual(["too-deep"]);
    const { pointer, message } = err.problems[0];
    expect(pointer).toBe("/session/stateBag/h/messages/0/contents/0" + "/toolCall".repeat(127));
    expect(message).toBe(
      "/session/stateBag/h/messages/0/contents/…(125 more)…/toolCall/toolCall/toolCall: expected at most 128 levels of nested tagged values, found deeper nesting (or a cycle)",
    );
    expect(err.message).not.toContain(pointer);
    expect(err.message.length).toBeLessThan(600);
    // the same message for an in-memory session that skips the parse limits
    const validated = validateSession(doc.session, { registry });
    expect(validated.problems.map((p) => [p.pointer.length, p.message])).toEqual([
      [pointer.length - "/session".length, expect.stringContaining("…(124 more)…")],
    ]);
  });
});

describe("envelope errors", () => {
  it.each([
    ["not an object", "[1]", "", /not a statebag.session document/],
    ["no format", JSON.stringify({ formatVersion: 1, session: {} }), "/format", /no "format"/],
    [
      "wrong format",
      JSON.stringify({ format: "acme.session", formatVersion: 1, session: {} }),
      "/format",
      /format is "acme.session"/,
    ],
    [
      "sessions document",
      JSON.stringify({ format: "statebag.sessions", formatVersion: 1, sessions: [] }),
      "/format",
      /not "statebag.session"/,
    ],
    [
      "formatVersion not an integer",
      JSON.stringify({ format: "statebag.session", formatVersion: "1", session: { id: "a", stateBag: {} } }),
      "/formatVersion",
      /integer >= 1/,
    ],
    ["missing session", JSON.stringify({ format: "statebag.session", formatVersion: 1 }), "/session", /no "session"/],
    [
      "unknown envelope key",
      env({ id: "a", stateBag: {} }, { extra: 1 }),
      "/extra",
      /unknown envelope property "extra"/,
    ],
    [
      "unknown envelope key, pointer-escaped",
      env({ id: "a", stateBag: {} }, { "a/b~c": 1 }),
      "/a~1b~0c",
      /unknown envelope property "a\/b~c"/,
    ],
  ])("%s", (_name, text, pointer, message) => {
    const err = loadError(text);
    expect(err.problems[0].code).toBe("envelope");
    expect(err.problems[0].pointer).toBe(pointer);
    expect(err.problems[0].message).toMatch(message);
  });

  it("a sessions document points at deserializeSessions", () => {
    const err = loadError(JSON.stringify({ format: "statebag.sessions", formatVersion: 1, sessions: [] }));
    expect(err.problems[0].hint).toMatch(/deserializeSessions/);
  });

  it("a newer formatVersion fails fast naming both versions", () => {
    const err = loadError(
      JSON.stringify({ format: "statebag.session", formatVersion: 3, session: { id: "a", stateBag: {} } }),
    );
    expect(err.problems[0].message).toBe(
      "the document is statebag.session format version 3, but this statebag reads format versions up to 1",
    );
    expect(err.problems[0].hint).toMatch(/upgrade statebag/);
  });

  it("a bare session (JSON.stringify(session)) is read as format 1, or refused with a hint when allowBare is false", () => {
    const bare = JSON.stringify({ id: "a", stateBag: { h: history({ $type: "text", text: "x" }) } });
    expect(deserializeSession(bare, { registry }).id).toBe("a");
    expect(loadError(bare, { allowBare: false }).problems[0].hint).toMatch(/bare session/);
    const invalidBare = JSON.stringify({ id: "a", stateBag: { h: history({ $type: "text" }) } });
    expect(loadError(invalidBare, { allowBare: true }).problems.map((p) => p.pointer)).toEqual([
      "/stateBag/h/messages/0/contents/0/text",
    ]);
  });

  it("deserializeSessions checks its own envelope", () => {
    expect(() => deserializeSessions(env({ id: "a", stateBag: {} }), { registry })).toThrow(/not "statebag.sessions"/);
    expect(() =>
      deserializeSessions(JSON.stringify({ format: "statebag.sessions", formatVersion: 1, sessions: {} }), {
        registry,
      }),
    ).toThrow(/must be an array/);
  });
});

describe("session shape errors", () => {
  it("collects every problem of the session object", () => {
    const err = loadError(env({ id: "", kind: "remote", conversationId: { a: 1 }, stateBag: [], extra: true }));
    expect(brief(err.problems)).toEqual([
      ["session", "/session/id"],
      ["session", "/session/kind"],
      ["session", "/session/conversationId/a"],
      ["session", "/session/extra"],
      ["session", "/session/stateBag"],
    ]);
  });

  it("missing id and stateBag; non-object session", () => {
    expect(brief(loadError(env({})).problems)).toEqual([
      ["session", "/session/id"],
      ["session", "/session/stateBag"],
    ]);
    expect(brief(loadError(env("nope")).problems)).toEqual([["session", "/session"]]);
    expect(validateSession({ id: "a", stateBag: {}, conversationId: 5 }, { registry }).problems[0].pointer).toBe(
      "/conversationId",
    );
  });
});

describe("tagged value errors", () => {
  it("missing and non-string $type", () => {
    const err = loadError(
      env({
        id: "a",
        stateBag: { h: history({ text: "no tag" }, { $type: 42, text: "x" }), bad: { nope: 1 }, nul: null },
      }),
    );
    expect(brief(err.problems)).toEqual([
      ["missing-type", "/session/stateBag/h/messages/0/contents/0"],
      ["missing-type", "/session/stateBag/h/messages/0/contents/1"],
      ["missing-type", "/session/stateBag/bad"],
      ["not-tagged", "/session/stateBag/nul"],
    ]);
    expect(err.problems[1].found).toBe('"$type": number 42');
  });

  it("hostile $type names never resolve to anything", () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"]) {
      const session = { id: "a", stateBag: { h: history({ $type: name, text: "x" }), s: { $type: name } } };
      const text = env(session);
      const notices: string[] = [];
      const loaded = deserializeSession(text, {
        registry,
        onPreserved: (p) => notices.push(...p.map((n) => `${n.reason}:${n.$type}`)),
      });
      expect(notices).toEqual([`unknown-type:${name}`, `unknown-type:${name}`]);
      expect(loaded.stateBag.s).toEqual({ $type: name });
      expect(brief(loadError(text, { strict: true }).problems)).toEqual([
        ["unknown-type", "/session/stateBag/h/messages/0/contents/0"],
        ["unknown-type", "/session/stateBag/s"],
      ]);
    }
    expect(Object.prototype).not.toHaveProperty("text");
  });

  it("wrong family: a content type as state, a state type as content, an annotation as content", () => {
    const err = loadError(
      env({
        id: "a",
        stateBag: {
          t: { $type: "text", text: "x" },
          h: history({ $type: "acme.SummaryState", $version: 2, summary: "s" }, { $type: "citation" }),
        },
      }),
    );
    expect(brief(err.problems)).toEqual([
      ["wrong-family", "/session/stateBag/t"],
      ["wrong-family", "/session/stateBag/h/messages/0/contents/0"],
      ["wrong-family", "/session/stateBag/h/messages/0/contents/1"],
    ]);
    expect(err.problems[0].message).toContain("expected a value of the ProviderState family");
    expect(err.problems[0].found).toBe('"$type": "text" (AIContent family)');
  });

  it("invalid $version", () => {
    const err = loadError(
      env({
        id: "a",
        stateBag: {
          h: history({ $type: "text", $version: 1.5, text: "x" }, { $type: "text", $version: "2", text: "x" }),
        },
      }),
    );
    expect(brief(err.problems)).toEqual([
      ["invalid-version", "/session/stateBag/h/messages/0/contents/0"],
      ["invalid-version", "/session/stateBag/h/messages/0/contents/1"],
    ]);
  });

  it("an older version with no migration names the type and both versions", () => {
    const err = loadError(env({ id: "a", stateBag: { s: { $type: "acme.SummaryState", summary: "old" } } }));
    expect(brief(err.problems)).toEqual([["old-version", "/session/stateBag/s"]]);
    expect(err.problems[0].message).toMatch(
      /"acme.SummaryState" v1 at \/session\/stateBag\/s is older than the latest v2 and no migration reads v1/,
    );
    expect(err.problems[0].hint).toMatch(/defineMigration\(\{ type: "acme.SummaryState", from: 1, to: 2/);
  });
});

describe("schema errors map to pointers from the document root", () => {
  it("collects all problems across values, with expected/found/hint", () => {
    const session = {
      id: "a",
      stateBag: {
        h: {
          $type: "InMemoryChatHistoryState",
          messages: [
            { role: "user", contents: [{ $type: "text", text: "fine" }] },
            {
              role: 7,
              createdAt: "2025-02-30T10:00:00Z",
              contents: [
                { $type: "text", text: 1 },
                { $type: "usage", details: { inputTokenCount: 1.5 } },
              ],
              colour: "red",
            },
            {
              role: "assistant",
              contents: [
                { $type: "toolApprovalRequest", requestId: "r", toolCall: { $type: "functionCall", name: "f" } },
                {
                  $type: "text",
                  text: "t",
                  annotations: [{ $type: "citation", annotatedRegions: [{ $type: "textSpan", start: "0" }] }],
                },
                { $type: "data", uri: "http://not-data" },
              ],
            },
          ],
        },
        s: { $type: "acme.SummaryState", $version: 2 },
      },
    };
    const err = loadError(env(session));
    const got = err.problems.map((p) => [p.pointer, p.$type, p.expected]);
    expect(got).toEqual([
      // within one value, in the order its validator reports them
      [
        "/session/stateBag/h/messages/1/colour",
        "InMemoryChatHistoryState",
        'only "authorName", "createdAt", "role", "contents", "messageId", "additionalProperties"',
      ],
      ["/session/stateBag/h/messages/1/createdAt", "InMemoryChatHistoryState", 'a "date-time" string'],
      ["/session/stateBag/h/messages/1/role", "InMemoryChatHistoryState", "string"],
      ["/session/stateBag/h/messages/1/contents/0/text", "text", "string"],
      ["/session/stateBag/h/messages/1/contents/1/details/inputTokenCount", "usage", "integer"],
      ["/session/stateBag/h/messages/2/contents/0/toolCall/callId", "functionCall", 'property "callId"'],
      ["/session/stateBag/h/messages/2/contents/1/annotations/0/annotatedRegions/0/start", "textSpan", "integer"],
      ["/session/stateBag/h/messages/2/contents/2/uri", "data", "a string matching /^data:/"],
      ["/session/stateBag/s/summary", "acme.SummaryState", 'property "summary"'],
    ]);
    const byPointer = Object.fromEntries(err.problems.map((p) => [p.pointer, p]));
    expect(byPointer["/session/stateBag/h/messages/1/role"].found).toBe("number 7");
    expect(byPointer["/session/stateBag/h/messages/1/createdAt"].found).toBe('string "2025-02-30T10:00:00Z"');
    expect(byPointer["/session/stateBag/h/messages/1/createdAt"].hint).toMatch(/real calendar day/);
    expect(byPointer["/session/stateBag/h/messages/1/colour"].message).toMatch(/unknown property "colour"/);
    expect(byPointer["/session/stateBag/h/messages/1/colour"].hint).toMatch(/closed model/);
    expect(byPointer["/session/stateBag/s/summary"].found).toBe("nothing (the property is missing)");
  });

  it("the error message is readable: one numbered problem per entry, with what/where/hint", () => {
    const err = loadError(
      env({ id: "a", stateBag: { h: history({ $type: "text", text: 3 }), s: { $type: "text", text: "x" } } }),
    );
    const lines = err.message.split("\n");
    expect(lines).toEqual([
      'cannot load session "a": 2 problems',
      '  1. /session/stateBag/h/messages/0/contents/0/text must be string, found number 3 (in "text")',
      '  2. /session/stateBag/s: expected a value of the ProviderState family, found "$type": "text" (AIContent family)',
      '     hint: "text" is registered in the AIContent family and cannot stand where a value of the ProviderState family belongs',
    ]);
    // the expected/found line appears when the message does not already say both
    const missing = loadError(env({ id: "a", stateBag: { h: history({ $type: "text" }) } }));
    expect(missing.message.split("\n").slice(1)).toEqual([
      '  1. /session/stateBag/h/messages/0/contents/0/text: required property "text" is missing',
      '     expected property "text"; found nothing (the property is missing)',
      '     hint: "text" v1 requires "text"',
    ]);
    expect(err.message).not.toMatch(/\n\s+at /); // no stack frames in the message
  });

  it("long reports are cut with a count", () => {
    const contents = Array.from({ length: 30 }, () => ({ $type: "text" }));
    const err = loadError(env({ id: "a", stateBag: { h: history(...contents) } }));
    expect(err.problems).toHaveLength(30);
    expect(err.message).toMatch(/\.\.\. and 10 more \(see error\.problems\)/);
  });

  it("pointers escape ~ and / in keys", () => {
    const err = loadError(env({ id: "a", stateBag: { "a/b~c": { $type: "text", text: "x" } } }));
    expect(err.problems[0].pointer).toBe("/session/stateBag/a~1b~0c");
  });

  it("sessions arrays point into /sessions/<i>", () => {
    const text = JSON.stringify({
      format: "statebag.sessions",
      formatVersion: 1,
      sessions: [
        { id: "ok", stateBag: {} },
        { id: "bad", stateBag: { h: history({ $type: "text" }) } },
      ],
    });
    let err: SessionValidationError | undefined;
    try {
      deserializeSessions(text, { registry });
    } catch (e) {
      err = e as SessionValidationError;
    }
    expect(err?.problems.map((p) => p.pointer)).toEqual(["/sessions/1/stateBag/h/messages/0/contents/0/text"]);
  });
});

describe("saving", () => {
  const invalid = (): AgentSession => ({ id: "a", stateBag: { h: history({ $type: "text", text: 3 }) as never } });

  it("always checks the session object; validate: true checks every value", () => {
    expect(() => serializeSession({ id: "", stateBag: {} } as AgentSession, { registry })).toThrow(
      /cannot save session "": 1 problem/,
    );
    expect(() => serializeSession({ id: "a", stateBag: { x: { nope: 1 } } } as never, { registry })).toThrow(
      SessionValidationError,
    );
    expect(serializeSession(invalid(), { registry })).toContain('"text":3'); // structural check only
    try {
      serializeSession(invalid(), { registry, validate: true });
      throw new Error("expected a throw");
    } catch (e) {
      expect((e as SessionValidationError).problems.map((p) => p.pointer)).toEqual([
        "/session/stateBag/h/messages/0/contents/0/text",
      ]);
    }
    expect(() => serializeSessions([{ id: "ok", stateBag: {} }, invalid()], { registry, validate: true })).toThrow(
      /\/sessions\/1\/stateBag\/h/,
    );
  });

  it("values JSON cannot hold are a clear error", () => {
    const cyclic: any = { $type: "functionResult", callId: "c" };
    cyclic.result = cyclic;
    const err = (() => {
      try {
        serializeSession({ id: "a", stateBag: { h: history(cyclic) as never } }, { registry });
      } catch (e) {
        return e as SessionValidationError;
      }
    })();
    expect(err?.problems[0].code).toBe("not-json");
    expect(err?.message).toMatch(/cannot be written as JSON/);
  });

  it("a cycle through tagged values is bounded by maxNesting, not a stack overflow", () => {
    const req: any = { $type: "toolApprovalRequest", requestId: "r" };
    req.toolCall = req;
    const result = validateSession({ id: "a", stateBag: { h: history(req) } }, { registry, maxNesting: 50 });
    expect(result.problems.map((p) => p.code)).toEqual(["too-deep"]);
  });
});

describe("prototype pollution", () => {
  it("hostile keys in a loaded document never reach a prototype", () => {
    const text = `{"format":"statebag.session","formatVersion":1,"session":{"id":"a","stateBag":{"__proto__":{"$type":"text","polluted":true}}}}`;
    expect(loadError(text).problems[0].message).toMatch(/"__proto__" key at \/session\/stateBag\/__proto__/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("with protoKeys: keep, they stay own data and round-trip byte-equal", () => {
    const inner = `{"id":"a","stateBag":{"__proto__":{"$type":"x.Unknown","polluted":true},"h":{"$type":"InMemoryChatHistoryState","messages":[{"role":"user","contents":[{"$type":"functionResult","callId":"c","result":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}]}]}}}`;
    const text = `{"format":"statebag.session","formatVersion":1,"session":${inner}}`;
    const loaded = deserializeSession(text, { registry, limits: { protoKeys: "keep" } });
    expect(Object.getPrototypeOf(loaded.stateBag)).toBe(Object.prototype);
    expect(Object.hasOwn(loaded.stateBag, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
    // Save and load are one contract: the same limits on both sides.
    expect(serializeSession(loaded, { registry, validate: true, limits: { protoKeys: "keep" } })).toBe(text);
    // By default a "__proto__" provider key is refused on save exactly as on load (nothing written).
    let saveError: SessionValidationError | undefined;
    try {
      serializeSession(loaded, { registry, validate: true });
    } catch (e) {
      saveError = e as SessionValidationError;
    }
    expect(saveError?.problems.map((p) => p.message)).toEqual(loadError(text).problems.map((p) => p.message));
  });
});
