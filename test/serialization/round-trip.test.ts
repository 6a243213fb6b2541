import { describe, expect, it } from "vitest";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import {
  SESSION_FORMAT_VERSION,
  SessionValidationError,
  deserializeSession,
  deserializeSessions,
  serializeSession,
  serializeSessions,
} from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { validateSession, validateValue } from "../../src/runtime/validation/validate.js";
import type { PreservedValue } from "../../src/runtime/core/problems.js";
import { makeModelTypes, makeSession } from "./model.js";

const registry = new TypeRegistry({ source: "test model", types: makeModelTypes() });

function small(): AgentSession {
  return {
    id: "s1",
    kind: "local",
    stateBag: {
      history: {
        $type: "InMemoryChatHistoryState",
        messages: [
          { role: "user", createdAt: "2025-01-31T12:00:00Z", contents: [{ $type: "text", text: "hi" }] },
          {
            role: "assistant",
            contents: [
              { $type: "functionCall", callId: "c1", name: "f", arguments: { q: 1 } },
              {
                $type: "toolApprovalRequest",
                requestId: "r1",
                toolCall: { $type: "functionCall", callId: "c1", name: "f" },
              },
              {
                $type: "text",
                text: "see",
                annotations: [
                  { $type: "citation", url: "https://x", annotatedRegions: [{ $type: "textSpan", start: 0, end: 3 }] },
                ],
              },
            ],
          },
        ],
      },
      summary: { $type: "acme.SummaryState", $version: 2, summary: "so far" },
    },
  };
}

describe("round trip", () => {
  it("serializes in the versioned envelope and reads back the same session", () => {
    const session = small();
    const text = serializeSession(session, { registry, validate: true });
    const doc = JSON.parse(text);
    expect(Object.keys(doc)).toEqual(["format", "formatVersion", "session"]);
    expect(doc.format).toBe("statebag.session");
    expect(doc.formatVersion).toBe(SESSION_FORMAT_VERSION);
    const back = deserializeSession(text, { registry });
    expect(back).toEqual(session);
    expect(serializeSession(back, { registry })).toBe(text);
  });

  it("round-trips a 1,000-message session from text, bytes and a parsed object", () => {
    const session = makeSession(1000);
    const text = serializeSession(session, { registry, validate: true });
    expect(deserializeSession(text, { registry })).toEqual(session);
    expect(deserializeSession(new TextEncoder().encode(text), { registry })).toEqual(session);
    const parsed = JSON.parse(text);
    const fromObject = deserializeSession(parsed, { registry });
    expect(fromObject).toBe(parsed.session); // nothing to migrate: the caller's object itself
  });

  it("round-trips arrays of sessions", () => {
    const sessions = [
      small(),
      { ...small(), id: "s2", kind: "hosted" as const, conversationId: { thread: "t1", run: "r1" } },
      { id: "s3", stateBag: {} },
    ];
    const text = serializeSessions(sessions, { registry, validate: true });
    expect(JSON.parse(text)).toMatchObject({ format: "statebag.sessions", formatVersion: 1 });
    expect(deserializeSessions(text, { registry })).toEqual(sessions);
  });

  it("is independent of key order: $type last, keys shuffled everywhere", () => {
    const session = small();
    const shuffle = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(shuffle);
      if (typeof v !== "object" || v === null) return v;
      const entries = Object.entries(v).reverse(); // $type (first when written) becomes last
      return Object.fromEntries(entries.map(([k, x]) => [k, shuffle(x)]));
    };
    const shuffled = shuffle({ session, formatVersion: 1, format: "statebag.session" }) as Record<string, unknown>;
    const text = JSON.stringify(shuffled);
    expect(text.indexOf('"$type":"text"')).toBeGreaterThan(text.indexOf('"text":"hi"'));
    const back = deserializeSession(text, { registry, strict: true });
    expect(back).toEqual(session);
  });

  it("pretty-prints on request", () => {
    expect(serializeSession(small(), { registry, space: 2 })).toContain('\n  "formatVersion": 1,');
  });
});

describe("unknown types are preserved", () => {
  const foreignState = {
    $type: "other.app.State",
    $version: 7,
    nested: { deep: [1, { $type: "whatever" }] },
    note: "keep me",
  };
  const futureContent = { $type: "acme.hologram", frames: 3, annotations: [{ $type: "nope" }] };
  const newerText = { $type: "text", $version: 2, text: "from the future", extra: true };

  function withUnknowns(): AgentSession {
    const s = small();
    s.stateBag.foreign = foreignState as never;
    (s.stateBag.history as any).messages[0].contents.push(futureContent, newerText);
    return s;
  }

  it("keeps unknown state values and unknown/newer contents verbatim through load + save", () => {
    const original = JSON.stringify({ format: "statebag.session", formatVersion: 1, session: withUnknowns() });
    const notices: PreservedValue[] = [];
    const loaded = deserializeSession(original, { registry, onPreserved: (p) => notices.push(...p) });
    expect(loaded.stateBag.foreign).toEqual(foreignState);
    expect((loaded.stateBag.history as any).messages[0].contents.slice(1)).toEqual([futureContent, newerText]);
    const saved = serializeSession(loaded, { registry, validate: true });
    expect(saved).toBe(original); // byte-equal
    expect(notices.map((n) => [n.pointer, n.reason, n.$type, n.version])).toEqual([
      ["/session/stateBag/history/messages/0/contents/1", "unknown-type", "acme.hologram", 1],
      ["/session/stateBag/history/messages/0/contents/2", "newer-version", "text", 2],
      ["/session/stateBag/foreign", "unknown-type", "other.app.State", 7],
    ]);
    expect(notices[1].message).toMatch(/newer than this registry's v1/);
  });

  it("validateSession reports them as preserved, not problems", () => {
    const result = validateSession(withUnknowns(), { registry });
    expect(result.ok).toBe(true);
    expect(result.problems).toEqual([]);
    expect(result.preserved).toHaveLength(3);
  });

  it("strict mode rejects them, each with its pointer", () => {
    const text = JSON.stringify({ format: "statebag.session", formatVersion: 1, session: withUnknowns() });
    let err: SessionValidationError | undefined;
    try {
      deserializeSession(text, { registry, strict: true });
    } catch (e) {
      err = e as SessionValidationError;
    }
    expect(err).toBeInstanceOf(SessionValidationError);
    expect(err!.problems.map((p) => [p.code, p.pointer])).toEqual([
      ["unknown-type", "/session/stateBag/history/messages/0/contents/1"],
      ["newer-version", "/session/stateBag/history/messages/0/contents/2"],
      ["unknown-type", "/session/stateBag/foreign"],
    ]);
    expect(() => serializeSession(withUnknowns(), { registry, strict: true, validate: true })).toThrow(
      SessionValidationError,
    );
  });
});

describe("validateValue", () => {
  it("validates one content with what is nested in it", () => {
    expect(validateValue({ $type: "text", text: "x" }, { registry, family: "AIContent" }).ok).toBe(true);
    const bad = validateValue(
      { $type: "toolApprovalRequest", requestId: "r", toolCall: { $type: "text" } },
      { registry, family: "AIContent", path: ["contents", 0] },
    );
    expect(bad.problems.map((p) => p.pointer)).toEqual(["/contents/0/toolCall/text"]);
    expect(validateValue({ $type: "text", text: "x" }, { registry }).problems[0].code).toBe("wrong-family");
  });
});
