/**
 * Issue #23: quarantine loads. A value that fails validation or migration is set aside verbatim in
 * `session.quarantine`; the rest loads and runs; saves write it back unchanged; a strict load
 * still refuses it with the same problems; JSON-level refusals are never bypassed.
 */
import { Type } from "@sinclair/typebox";
import { afterAll, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/agent.js";
import { messageText } from "../../src/index.js";
import type { AgentSession, QuarantinedValue } from "../../src/runtime/core/session.js";
import { defineMigration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import {
  SessionValidationError,
  deserializeSession,
  deserializeSessions,
  serializeSession,
  serializeSessions,
} from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { cli, tempDir } from "../cli/helpers.js";

const HISTORY = "statebag.chatHistory";

function registry(step3?: (v: any) => unknown): TypeRegistry {
  const r = TypeRegistry.compose(defaultRegistry());
  r.register({
    $type: "acme.Profile",
    version: 4,
    schema: Type.Object({
      name: Type.String(),
      emails: Type.Array(Type.String()),
      tier: Type.Union([Type.Literal("free"), Type.Literal("pro")]),
    }),
  });
  r.addMigration(
    defineMigration({
      type: "acme.Profile",
      from: 1,
      to: 2,
      up: ({ fullName, ...rest }: any) => ({ ...rest, name: fullName }),
    }),
    defineMigration({
      type: "acme.Profile",
      from: 2,
      to: 3,
      up: ({ email, ...rest }: any) => ({ ...rest, emails: email ? [email] : [] }),
    }),
    defineMigration({ type: "acme.Profile", from: 3, to: 4, up: step3 ?? ((v: any) => ({ ...v, tier: "free" })) }),
  );
  return r;
}

const msg = (role: string, text: string) => ({ role, contents: [{ $type: "text", text }] });

function history(n: number, bad: Record<number, unknown> = {}) {
  const messages = Array.from({ length: n }, (_, i) =>
    i in bad ? bad[i] : msg(i % 2 ? "assistant" : "user", `m${i}`),
  );
  return {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    messages,
    droppedMessageCount: 0,
    branches: [],
    branchPoints: [],
  };
}

const doc = (session: unknown, space?: number) =>
  JSON.stringify({ format: "statebag.session", formatVersion: 1, session }, null, space);

function strictError(text: string | object, options: object = {}): SessionValidationError {
  try {
    deserializeSession(text, options);
  } catch (error) {
    if (error instanceof SessionValidationError) return error;
    throw error;
  }
  throw new Error("expected the strict load to fail");
}

/** The problems (listed per quarantined value on the re-check, so compared in pointer order). */
const shape = (e: SessionValidationError) =>
  e.problems
    .map((p) => ({ code: p.code, pointer: p.pointer, message: p.message, expected: p.expected, found: p.found }))
    .sort((a, b) => (a.pointer + a.message < b.pointer + b.message ? -1 : 1));

describe("quarantine: what is set aside", () => {
  it("a bad state-bag value: set aside with its pointer and problem; the rest loads; strict refuses", () => {
    const r = registry();
    const text = doc({
      id: "s",
      kind: "local",
      stateBag: {
        [HISTORY]: history(2),
        profile: { $type: "acme.Profile", $version: 4, name: "Ada", emails: [], tier: "gold" },
      },
    });
    const strict = strictError(text, { registry: r });
    const reported: QuarantinedValue[] = [];
    const session = deserializeSession(text, {
      registry: r,
      quarantine: true,
      onQuarantined: (q) => reported.push(...q),
    });
    expect(Object.keys(session.stateBag)).toEqual([HISTORY]);
    expect(session.quarantine).toHaveLength(1);
    const [q] = session.quarantine!;
    expect(q.pointer).toBe("/stateBag/profile");
    expect(q.reason).toEqual(strict.problems[0]);
    expect(q.reason.code).toBe("schema");
    expect(JSON.parse(q.text)).toEqual({ $type: "acme.Profile", $version: 4, name: "Ada", emails: [], tier: "gold" });
    expect(reported).toEqual(session.quarantine);
  });

  it("a bad message in a 1,000-message history: only that message is set aside (the model sees 999)", () => {
    const bad = { role: 42, contents: [{ $type: "text", text: "broken" }] };
    const text = doc({ id: "s", kind: "local", stateBag: { [HISTORY]: history(1000, { 537: bad }) } });
    const strict = strictError(text);
    expect(strict.problems[0].pointer).toBe(`/session/stateBag/${HISTORY}/messages/537/role`);
    const session = deserializeSession(text, { quarantine: true });
    const messages = (session.stateBag[HISTORY] as any).messages;
    expect(messages).toHaveLength(999);
    expect(messages[537].contents[0].text).toBe("m538");
    expect(session.quarantine).toEqual([
      { pointer: `/stateBag/${HISTORY}/messages/537`, text: JSON.stringify(bad), reason: strict.problems[0] },
    ]);
  });

  it("a bad content deep in a message (unknown type, strict) and several bad messages", () => {
    const unknown = { role: "user", contents: [{ $type: "acme.Sticker", id: 1 }] };
    const text = doc({
      id: "s",
      stateBag: { [HISTORY]: history(10, { 2: unknown, 7: { role: "user", contents: "no" } }) },
    });
    const session = deserializeSession(text, { quarantine: true, strict: true });
    expect(session.quarantine!.map((q) => [q.pointer, q.reason.code])).toEqual([
      [`/stateBag/${HISTORY}/messages/2`, "unknown-type"],
      [`/stateBag/${HISTORY}/messages/7`, "schema"],
    ]);
    expect((session.stateBag[HISTORY] as any).messages).toHaveLength(8);
    // Without strict an unknown type is kept in place (preserved), not quarantined.
    const lenient = deserializeSession(text.replace('"contents":"no"', '"contents":[]'), { quarantine: true });
    expect(lenient.quarantine).toBeUndefined();
  });

  it("a value whose migration throws is set aside; the others migrate", () => {
    const r = registry(() => {
      throw new Error("cannot decide the tier");
    });
    const text = doc({
      id: "s",
      stateBag: {
        a: { $type: "acme.Profile", fullName: "Ada", email: "ada@x.org" },
        b: { $type: "acme.Profile", $version: 4, name: "Bo", emails: [], tier: "pro" },
      },
    });
    const strict = strictError(text, { registry: r });
    const session = deserializeSession(text, { registry: r, quarantine: true });
    expect(session.stateBag.b).toMatchObject({ name: "Bo" });
    expect(session.quarantine).toHaveLength(1);
    expect(session.quarantine![0]).toMatchObject({ pointer: "/stateBag/a", reason: { code: "migration-failed" } });
    expect(session.quarantine![0].reason).toEqual(strict.problems[0]);
    expect(session.quarantine![0].text).toBe('{"$type":"acme.Profile","fullName":"Ada","email":"ada@x.org"}');
  });

  it("unknown types: strict + quarantine sets them aside; the whole history entry when its own fields are wrong", () => {
    const text = doc({
      id: "s",
      stateBag: { x: { $type: "acme.Unknown", v: 1 }, [HISTORY]: { ...history(3), droppedMessageCount: -1 } },
    });
    const session = deserializeSession(text, { quarantine: true, strict: true });
    expect(session.stateBag).toEqual({});
    expect(session.quarantine!.map((q) => [q.pointer, q.reason.code])).toEqual([
      ["/stateBag/x", "unknown-type"],
      [`/stateBag/${HISTORY}`, "schema"],
    ]);
    expect(() => deserializeSession(text, { strict: true })).toThrow(SessionValidationError);
  });

  it("a clean session loads exactly as a strict load does (no quarantine property)", () => {
    const text = doc({ id: "s", kind: "local", stateBag: { [HISTORY]: history(3) } });
    expect(deserializeSession(text, { quarantine: true })).toEqual(deserializeSession(text));
    expect("quarantine" in deserializeSession(text, { quarantine: true })).toBe(false);
  });
});

describe("quarantine: byte for byte, saved back, refused again", () => {
  // Hand-formatted JSON: whitespace, \u escapes, 1.0, 1e2: a re-serialization would differ.
  const badText =
    '{ "$type" : "acme.Profile", "$version": 4,\n    "name": "Ad\\u00e9 \\/ x", "emails": [ ], "tier": "gold", "score": 1.0e2 }';
  const text = `{\n  "format": "statebag.session",\n  "formatVersion": 1,\n  "session": {\n    "id": "s",\n    "stateBag": {\n      "ok": {"$type":"acme.Profile","$version":4,"name":"Bo","emails":[],"tier":"free"},\n      "bad":   ${badText}\n    }\n  }\n}\n`;

  it("keeps the value's exact original characters, from text and from UTF-8 bytes", () => {
    const r = registry();
    for (const input of [
      text,
      new TextEncoder().encode(text),
      new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]),
    ]) {
      const session = deserializeSession(input, { registry: r, quarantine: true });
      expect(session.quarantine![0].text).toBe(badText);
      expect(Buffer.from(session.quarantine![0].text, "utf8").equals(Buffer.from(badText, "utf8"))).toBe(true);
      expect(text.includes(session.quarantine![0].text)).toBe(true);
    }
  });

  it("a save writes it back unchanged (through several round trips), and a strict load refuses it with the same problems", () => {
    const r = registry();
    const original = strictError(text, { registry: r });
    let session = deserializeSession(text, { registry: r, quarantine: true });
    for (let i = 0; i < 3; i++) {
      const saved = serializeSession(session, { registry: r, validate: true });
      expect(JSON.parse(saved).session.quarantine[0].text).toBe(badText);
      expect(JSON.parse(saved).formatVersion).toBe(1);
      expect(shape(strictError(saved, { registry: r }))).toEqual(shape(original));
      expect(shape(strictError(saved, { registry: r, strict: true }))).toEqual(shape(original));
      expect(validateSession(JSON.parse(saved).session, { registry: r }).ok).toBe(false);
      session = deserializeSession(saved, { registry: r, quarantine: true });
      expect(session.quarantine).toHaveLength(1);
    }
  });

  it("a quarantined message is refused again at its own index, with the same problems", () => {
    const text = doc({
      id: "s",
      kind: "local",
      stateBag: {
        [HISTORY]: history(1000, { 537: { role: "user", contents: [{ $type: "text" }] }, 900: { role: 1 } }),
      },
    });
    const original = strictError(text);
    const saved = serializeSession(deserializeSession(text, { quarantine: true }), { validate: true });
    expect(shape(strictError(saved))).toEqual(shape(original));
  });

  it("a value that validates now is still refused by a strict load, as quarantined", () => {
    const saved = serializeSession(deserializeSession(text, { registry: registry(), quarantine: true }));
    const loose = TypeRegistry.compose(defaultRegistry());
    loose.register({
      $type: "acme.Profile",
      version: 4,
      schema: Type.Object({
        name: Type.String(),
        emails: Type.Array(Type.String()),
        tier: Type.String(),
        score: Type.Optional(Type.Number()),
      }),
    });
    const e = strictError(saved, { registry: loose });
    expect(e.problems.map((p) => [p.code, p.pointer])).toEqual([["quarantined", "/session/quarantine/0"]]);
  });

  it("several sessions in one document", () => {
    const r = registry();
    const good = { id: "a", stateBag: {} };
    const bad = { id: "b", stateBag: { p: { $type: "acme.Profile", $version: 4, tier: "x" } } };
    const text = JSON.stringify({ format: "statebag.sessions", formatVersion: 1, sessions: [good, bad] });
    const sessions = deserializeSessions(text, { registry: r, quarantine: true });
    expect(sessions[0]).toEqual(good);
    expect(sessions[1].quarantine![0]).toMatchObject({
      pointer: "/stateBag/p",
      text: JSON.stringify(bad.stateBag.p),
      reason: { pointer: "/sessions/1/stateBag/p/name" },
    });
    expect(() =>
      deserializeSessions(serializeSessions(sessions, { validate: true, registry: r }), { registry: r }),
    ).toThrow(SessionValidationError);
  });

  it("never changes a caller's parsed object", () => {
    const parsed = JSON.parse(text);
    const before = structuredClone(parsed);
    deserializeSession(parsed, { registry: registry(), quarantine: true });
    expect(parsed).toEqual(before);
  });
});

describe("quarantine: the agent runs, stores use it", () => {
  it("an agent turn works on a session with a quarantined message (absent from what the model sees)", async () => {
    const text = doc({
      id: "s",
      kind: "local",
      stateBag: {
        [HISTORY]: {
          ...history(0),
          messages: [
            msg("user", "my name is Ada"),
            { role: "user", contents: [{ $type: "text", text: 7 }] },
            msg("assistant", "Nice to meet you, Ada."),
          ],
        },
      },
    });
    const original = strictError(text);
    const session = deserializeSession(text, { quarantine: true });
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const response = await agent.run("what is my name?", session);
    expect(response.text).toBe("Your name is Ada.");
    const seen = (await agent.history.listMessages(session)).map(messageText);
    expect(seen).toEqual(["my name is Ada", "Nice to meet you, Ada.", "what is my name?", "Your name is Ada."]);
    const saved = serializeSession(session, { validate: true });
    expect(JSON.parse(saved).session.quarantine).toEqual(session.quarantine);
    expect(shape(strictError(saved))).toEqual(shape(original));
  });

  it("defaultSessionCodec({ quarantine: true }) loads through it; the default codec refuses", () => {
    const text = doc({ id: "s", stateBag: { [HISTORY]: history(3, { 1: { role: null } }) } });
    const session = defaultSessionCodec({ quarantine: true }).deserialize(text, "s");
    expect(session.quarantine).toHaveLength(1);
    const saved = defaultSessionCodec({ quarantine: true }).serialize(session);
    expect(() => defaultSessionCodec().deserialize(saved, "s")).toThrow(SessionValidationError);
  });
});

describe("quarantine never bypasses the document's own rules", () => {
  const q = { quarantine: true };
  it("refuses hostile JSON at parse level: deep, huge, __proto__, duplicate keys, 1e400", () => {
    const deep = `{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"x":{"$type":"t","v":${"[".repeat(5000)}${"]".repeat(5000)}}}}}`;
    expect(strictError(deep, q).problems[0].code).toBe("json");
    const huge = doc({ id: "s", stateBag: { x: { $type: "t", v: "a".repeat(2000) } } });
    expect(strictError(huge, { ...q, limits: { maxBytes: 1000 } }).problems[0].code).toBe("json");
    const proto =
      '{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"x":{"$type":"t","__proto__":{"a":1}}}}}';
    expect(strictError(proto, { ...q, limits: { protoKeys: "reject" } }).problems[0].code).toBe("json");
    const dup =
      '{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"x":{"$type":"t","a":1,"a":2}}}}';
    expect(strictError(dup, q).problems[0].code).toBe("json");
    const inf =
      '{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"x":{"$type":"t","a":1e400}}}}';
    expect(strictError(inf, q).problems[0].code).toBe("not-json");
  });

  it("refuses a __proto__ state-bag key, a bad envelope or session object whole", () => {
    const proto =
      '{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"__proto__":{"$type":"acme.X"},"y":{"$type":"acme.Y","$version":0}}}}';
    expect(strictError(proto, q).problems.map((p) => p.code)).toContain("session");
    expect(
      strictError(doc({ id: "", stateBag: { y: { $type: "acme.Y", $version: 0 } } }), q).problems.map((p) => p.pointer),
    ).toContain("/session/id");
    expect(
      strictError(
        JSON.stringify({ format: "statebag.session", formatVersion: 9, session: { id: "s", stateBag: {} } }),
        q,
      ).problems[0].code,
    ).toBe("envelope");
  });

  it("refuses a malformed quarantine section", () => {
    for (const quarantine of [
      "x",
      [{ pointer: "/id", text: "1", reason: {} }],
      [{ pointer: "/stateBag/a", text: 1, reason: {} }],
    ]) {
      expect(strictError(doc({ id: "s", stateBag: {}, quarantine }), q).problems[0]).toMatchObject({
        code: "session",
        details: { property: "quarantine" },
      });
      expect(() => serializeSession({ id: "s", stateBag: {}, quarantine } as unknown as AgentSession)).toThrow(
        SessionValidationError,
      );
    }
  });
});

describe("statebag inspect lists quarantined values", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  it("human and --json", async () => {
    const { SqliteSessionStore } = await import("../../src/runtime/stores/sqlite/store.js");
    const path = `${tmp.dir}/q.db`;
    const codec = defaultSessionCodec({ quarantine: true });
    const store = new SqliteSessionStore({ path, codec });
    await store.setup();
    const session = codec.deserialize(
      doc({ id: "k", kind: "local", stateBag: { [HISTORY]: history(4, { 2: { role: false, contents: [] } }) } }),
      "k",
    );
    await store.save(session, { expectedRevision: null });
    expect((await store.get("k"))!.session.quarantine).toEqual(session.quarantine);
    await store.close();

    const human = await cli(["inspect", "--store", `sqlite:${path}`, "k", "--brief"]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("1 value set aside by a quarantine load");
    expect(human.stdout).toContain(`quarantined: /stateBag/${HISTORY}/messages/2`);
    const json = (await cli(["inspect", "--store", `sqlite:${path}`, "k", "--json"])).json();
    expect(json.validation.quarantined).toEqual(session.quarantine);
    expect(json.validation.problems[0].pointer).toBe(`/session/stateBag/${HISTORY}/messages/2/role`);
  });
});
