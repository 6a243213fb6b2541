/**
 * Save and load are one contract (the cases the probe found), linear-time error reporting with a
 * bounded report, and errors that never echo input raw.
 */
import { describe, expect, it } from "vitest";
import type { AgentSession } from "../../src/index.js";
import { jsonEqual } from "../../src/runtime/core/json.js";
import {
  SessionValidationError,
  deserializeSession,
  serializeSession,
} from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";

function error(run: () => unknown): SessionValidationError {
  try {
    run();
  } catch (e) {
    if (e instanceof SessionValidationError) return e;
    throw e;
  }
  throw new Error("expected a SessionValidationError");
}

const history = (result: unknown): AgentSession => ({
  id: "s1",
  stateBag: {
    h: {
      $type: "InMemoryChatHistoryState",
      $version: 3,
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
      messages: [{ role: "tool", contents: [{ $type: "functionResult", callId: "c1", result } as never] }],
    } as never,
  },
});

const envelope = (session: unknown) => JSON.stringify({ format: "statebag.session", formatVersion: 1, session });

function nestedArray(depth: number): unknown {
  let v: unknown = "bottom";
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

describe("save and load are one contract", () => {
  it("a tool result holding __proto__ is saved, loaded back equal, and never becomes a prototype", async () => {
    const result = JSON.parse('{"data":{"__proto__":{"isAdmin":true}}}');
    const store = new MemorySessionStore();
    const session = history(result);
    await store.save(session, { expectedRevision: null });
    const loaded = (await store.get("s1"))!.session;
    expect(jsonEqual(loaded, session)).toBe(true);
    const data = (loaded.stateBag.h as unknown as { messages: { contents: { result: { data: object } }[] }[] })
      .messages[0].contents[0].result.data;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(Object.hasOwn(data, "__proto__")).toBe(true);
    expect((data as { isAdmin?: boolean }).isAdmin).toBeUndefined();
    expect(({} as { isAdmin?: boolean }).isAdmin).toBeUndefined();
    // And again: a loaded session saves and loads again (withSession / migrate do exactly this).
    await store.save(loaded, { expectedRevision: 1 });
    expect(jsonEqual((await store.get("s1"))!.session, session)).toBe(true);
  });

  it("a __proto__ provider key is refused on save with the error load gives, and nothing is written", async () => {
    const session = JSON.parse('{"id":"s2","stateBag":{"__proto__":{"$type":"acme.X"}}}') as AgentSession;
    const store = new MemorySessionStore();
    const saveError = await store.save(session, { expectedRevision: null }).then(
      () => undefined,
      (e: unknown) => e as SessionValidationError,
    );
    expect(saveError).toBeInstanceOf(SessionValidationError);
    expect(await store.get("s2")).toBeUndefined();
    const loadError = error(() => deserializeSession(envelope(session)));
    expect(saveError!.problems).toEqual(loadError.problems);
    expect(loadError.problems[0].pointer).toBe("/session/stateBag/__proto__");
  });

  it("depth, keys and size: refused at save with the load limits and the same problem", () => {
    const cases: [string, AgentSession, { maxDepth?: number; maxKeys?: number; maxBytes?: number } | undefined][] = [
      ["deeper than the default load limit", history(nestedArray(260)), undefined],
      [
        "more keys than the limit",
        history(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]))),
        { maxKeys: 20 },
      ],
      ["over the size limit", history("x".repeat(5000)), { maxBytes: 4096 }],
    ];
    for (const [name, session, limits] of cases) {
      const saved = error(() => serializeSession(session, { validate: true, limits }));
      const loaded = error(() => deserializeSession(envelope(session), { limits }));
      expect(saved.problems, name).toEqual(loaded.problems);
      expect(saved.problems[0].code, name).toBe("json");
    }
    // Just inside the limits: saved and loaded back equal.
    const deepest = history(nestedArray(256 - 9));
    expect(jsonEqual(deserializeSession(serializeSession(deepest, { validate: true })), deepest)).toBe(true);
  });

  it("data JSON cannot hold as it is (NaN, a Date, an undefined array item) is refused at save, with its pointer", () => {
    for (const [value, found] of [
      [Number.NaN, /NaN/],
      [new Date(0), /Date/],
      [[1, undefined], /undefined array item/],
    ] as const) {
      const e = error(() => serializeSession(history({ v: value }), { validate: true }));
      expect(e.problems[0].code).toBe("not-json");
      expect(e.problems[0].pointer.startsWith("/session/stateBag/h/messages/0/contents/0/result/v")).toBe(true);
      expect(e.problems[0].message).toMatch(found);
    }
  });

  it('a "kind": "local" session holding a conversation id fails at load and at save, with the pointer', () => {
    const session = { id: "s3", kind: "local", conversationId: "conv_1", stateBag: {} } as AgentSession;
    const loaded = error(() => deserializeSession(envelope(session)));
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).toMatchObject({ code: "session", pointer: "/session/conversationId" });
    expect(loaded.message).toMatch(/local.*conversationId|drop conversationId/);
    expect(error(() => serializeSession(session)).problems).toEqual(loaded.problems);
    // hosted, or local without an id, are fine
    expect(() => deserializeSession(envelope({ ...session, kind: "hosted" }))).not.toThrow();
    expect(() => deserializeSession(envelope({ id: "s3", kind: "local", stateBag: {} }))).not.toThrow();
  });
});

describe("validation errors: linear time, bounded report", () => {
  const workflow = (n: number) => {
    const participants: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) participants[`local:p${i}`] = { conversationId: 5 };
    return envelope({ id: "wf", stateBag: { "statebag.workflow": { $type: "statebag.WorkflowState", participants } } });
  };

  it("a WorkflowState with 100,000 bad participants is reported quickly: 100 problems kept, all counted", () => {
    // 3 MB; the former per-combinator search took minutes on a tenth of this.
    const e = error(() => deserializeSession(workflow(100_000)));
    expect(e.problemCount).toBe(100_000);
    expect(e.problems).toHaveLength(100);
    expect(e.problems[0].pointer).toBe("/session/stateBag/statebag.workflow/participants/local:p0/conversationId");
    expect(e.problems[0].message).toMatch(/must be object or string, found number 5/);
    expect(e.message.length).toBeLessThan(10_000);
    expect(e.message).toMatch(/100000 problems/);
    expect(e.message).toMatch(/and 99980 more/);
  });

  it("maxProblems sets how many are kept; validateSession reports problemCount when it cut the list", () => {
    const doc = JSON.parse(workflow(500)).session;
    const result = validateSession(doc, { maxProblems: 7 });
    expect(result.problems).toHaveLength(7);
    expect(result.problemCount).toBe(500);
    expect(validateSession(doc).problems).toHaveLength(100);
  });

  it("90,000 unknown session properties: bounded error, no stack overflow", () => {
    const session: Record<string, unknown> = { id: "x", stateBag: {} };
    for (let i = 0; i < 90_000; i++) session[`extra${i}`] = i;
    const e = error(() => deserializeSession(JSON.stringify(session)));
    expect(e.problemCount).toBe(90_000);
    expect(e.problems.length).toBe(100);
  });
});

describe("errors never echo input raw", () => {
  it("a huge key and control characters are cut and escaped in messages, the pointer stays bounded", () => {
    const hugeKey = "k".repeat(5_000_000);
    const e = error(() =>
      deserializeSession(envelope({ id: "x", stateBag: {}, [hugeKey]: 1, "evil\u001b[2J\n✔ valid": 2 })),
    );
    expect(e.message.length).toBeLessThan(5_000);
    expect(e.message).toMatch(/5000000 chars/);
    expect(e.message).not.toMatch(/\u001b/);
    expect(e.message).toContain("\\u001b[2J\\n✔ valid");
    expect(e.message.split("\n").some((line) => line.startsWith("✔"))).toBe(false);
    for (const p of e.problems) expect(p.pointer.length).toBeLessThanOrEqual(2048);
  });

  it("a long unknown $type is cut in the problem and the message", () => {
    const t = "acme." + "T".repeat(100_000);
    const e = error(() => deserializeSession(envelope({ id: "x", stateBag: { a: { $type: t } } }), { strict: true }));
    expect(e.message.length).toBeLessThan(3_000);
    expect(e.problems[0].$type!.length).toBeLessThanOrEqual(256);
  });
});
