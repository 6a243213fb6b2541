import { describe, expect, it } from "vitest";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { SessionWalker, validateSession } from "../../src/runtime/validation/validate.js";
import { makeSession as makeBenchSession } from "../../bench/sessions.js";
import { makeModelTypes, makeSession } from "./model.js";

const registry = new TypeRegistry({ source: "test model", types: makeModelTypes() });

function walk(session: unknown, genericWalk: boolean) {
  const w = new SessionWalker({ registry, genericWalk });
  w.walkSession(session, ["session"]);
  return w.result();
}

describe("compiled slot walks", () => {
  it("report exactly what the generic walk reports", () => {
    const session = makeSession(200);
    const h = session.stateBag["statebag.chatHistory"];
    h.messages[3].contents[0].text = 5;
    h.messages[7].contents.push({ $type: "citation" });
    h.messages[9].contents[0].annotations = [
      { $type: "citation", annotatedRegions: [{ $type: "textSpan", start: "x" }, 4] },
    ];
    h.messages[11].contents.push({ $type: "toolApprovalRequest", requestId: "r", toolCall: { $type: "nope.Unknown" } });
    h.messages[12].contents = "not an array";
    h.messages[13] = null;
    const compiled = walk(session, false);
    const generic = walk(session, true);
    expect(compiled.problems.length).toBeGreaterThan(4);
    expect(compiled).toEqual(generic);
    expect(compiled.preserved.map((p) => p.pointer)).toEqual([
      "/session/stateBag/statebag.chatHistory/messages/11/contents/1/toolCall",
    ]);
  });

  it("a valid 1,000-message session has no problems either way", () => {
    const session = makeSession(1000);
    expect(walk(session, false)).toEqual({ ok: true, problems: [], preserved: [] });
    expect(walk(session, true)).toEqual({ ok: true, problems: [], preserved: [] });
  });

  it('map slots ("*" over object values) and property names that need quoting', () => {
    const r = new TypeRegistry({ types: makeModelTypes() });
    r.register({
      $type: "acme.Map",
      schema: { type: "object", properties: { "by topic": { type: "object" }, constructor: { type: "object" } } },
      slots: [
        { path: ["by topic", "*"], family: "AIContent" },
        { path: ["constructor", "*"], family: "AIContent" },
      ],
    });
    const session = {
      id: "a",
      stateBag: {
        m: { $type: "acme.Map", "by topic": { a: { $type: "text", text: 1 } }, constructor: { b: { $type: "text" } } },
      },
    };
    const run = (genericWalk: boolean) => {
      const w = new SessionWalker({ registry: r, genericWalk });
      w.walkSession(session, []);
      return w.result().problems.map((p) => p.pointer);
    };
    expect(run(false)).toEqual(["/stateBag/m/by topic/a/text", "/stateBag/m/constructor/b/text"]);
    expect(run(true)).toEqual(run(false));
    // an absent "constructor" is not read from Object.prototype
    const absent = { id: "a", stateBag: { m: { $type: "acme.Map" } } };
    expect(validateSession(absent, { registry: r }).problems).toEqual([]);
  });
});

describe("with the generated registry", () => {
  const generated = defaultRegistry();
  const hasHistory = generated.has("InMemoryChatHistoryState");

  it.skipIf(!hasHistory)("loads and saves a realistic session", () => {
    const session = makeBenchSession({ messages: 300 });
    const text = serializeSession(session, { validate: true });
    expect(deserializeSession(text)).toEqual(session);
  });

  it.skipIf(!hasHistory)("reports every problem of one value although generated validators stop at the first", () => {
    const session = makeBenchSession({ messages: 5 });
    const msg = (session.stateBag["statebag.chatHistory"] as any).messages[0];
    msg.role = 1;
    msg.createdAt = "2025-02-30T00:00:00Z";
    msg.contents[0].text = 2;
    msg.contents[0].extra = true;
    const result = validateSession(session);
    expect(result.problems.map((p) => p.pointer).sort()).toEqual(
      [
        "/stateBag/statebag.chatHistory/messages/0/role",
        "/stateBag/statebag.chatHistory/messages/0/createdAt",
        "/stateBag/statebag.chatHistory/messages/0/contents/0/text",
        "/stateBag/statebag.chatHistory/messages/0/contents/0/extra",
      ].sort(),
    );
  });
});
