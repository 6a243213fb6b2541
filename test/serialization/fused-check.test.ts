/**
 * The fused check (src/generated/fused-check.ts with its typed runtime, src/runtime/checks/fused-runtime.ts)
 * and today's path agree: on generated and mutated
 * documents, the fused check says "yes" only where the limits walk, the walker and the validators
 * accept with nothing to migrate or preserve; and it says "yes" wherever they do, except for what
 * it leaves to them on purpose ("__proto__" keys, `undefined` members, quarantine sections).
 * Mutations include the hostile corpus of the suite: hostile keys, lone surrogates, control
 * characters, depth and key limits, non-finite numbers, Dates, impossible dates, wrong versions
 * and types, duplicate keys and 1e400 in text. Then hostile session objects one rule at a time
 * (src/runtime/checks/session-rules.ts): the walker reports it, the fused check declines, the
 * agent refuses what the walker calls a local session with a conversation id.
 */
import { readFileSync, readdirSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeSession } from "../../bench/sessions.js";
import { generatedMigrations, generatedTypes } from "../../src/generated/registry.js";
import { unfusedTypes } from "../../src/generated/fused-check.js";
import {
  fusedLimits,
  fusedSession,
  fusedSessionDocument,
  fusedSessionsDocument,
  fusedValue,
} from "../../src/runtime/validation/fused.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import {
  checkWritableJson,
  checkedKeyCount,
  resolveLimits,
  type JsonLimits,
} from "../../src/runtime/json/safe-json.js";
import {
  SessionValidationError,
  deserializeSession,
  serializeSession,
} from "../../src/runtime/persistence/serialization.js";
import { SessionWalker, validateSession, validateValue } from "../../src/runtime/validation/validate.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { ScriptedChatClient } from "../../src/testing.js";

const FIXTURES = new URL("../fixtures/", import.meta.url);
/** One valid value of every generated type at its latest version (the golden fixtures). */
const examples = generatedTypes.map((t) => ({
  type: t,
  value: JSON.parse(readFileSync(new URL(`${t.$type}/v${t.version}.json`, FIXTURES), "utf8")) as unknown,
}));
const providerExamples = examples.filter((e) => e.type.family === "ProviderState");
const otherExamples = examples.filter((e) => e.type.family !== "ProviderState");

const SMALL: JsonLimits = { maxDepth: 12, maxKeys: 8, protoKeys: "keep" };
const DEFAULT: JsonLimits = { protoKeys: "keep" };

const hostileKey = fc.constantFrom(
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "isAdmin",
  "$type",
  "$version",
  "",
  "\ud800",
  "\u001b[2J\n✔ valid",
  "role",
  "contents",
  "text",
);
const key = fc.oneof(
  { weight: 1, arbitrary: hostileKey },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
);
const date = fc.constantFrom(
  "2025-01-06T09:00:00Z",
  "2025-02-30T00:00:00Z",
  "2024-02-29T23:59:60Z",
  "2024-12-31T23:59:60Z",
  "2025-01-06T09:00:00+01:00",
  "2025-01-06 09:00:00Z",
  "2025-01-06T09:00:00",
  "x",
);
const leaf = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -3, max: 3 }),
      fc.string({ unit: "binary", maxLength: 6 }),
      date,
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      "text",
      "functionCall",
      "usage",
      "citation",
      "textSpan",
      "InMemoryChatHistoryState",
      "statebag.ToolApprovalState",
      "acme.Unknown",
      0,
      1,
      2,
      3,
      -1,
      1.5,
      "1",
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(Number.NaN, Number.POSITIVE_INFINITY, new Date(0), undefined) },
);
const { value: openValue } = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>(
  (tie) => ({
    value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 3 }),
    object: fc.array(fc.tuple(key, tie("value")), { maxLength: 3 }).map(objectOf),
  }),
);
/** Something to put somewhere: JSON of any shape, a valid tagged value, a deep or wide one. */
const replacement = fc.oneof(
  { weight: 4, arbitrary: openValue },
  { weight: 2, arbitrary: fc.constantFrom(...examples.map((e) => e.value)).map((v) => structuredClone(v)) },
  { weight: 1, arbitrary: fc.tuple(fc.nat({ max: 300 }), key).map(([depth, k]) => nest(depth, k)) },
  {
    weight: 1,
    arbitrary: fc.nat({ max: 12 }).map((n) => objectOf(Array.from({ length: n }, (_, i) => [`k${i}`, i] as const))),
  },
);

/** An object with own data properties only ("__proto__" included), as JSON.parse builds it. */
function objectOf(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

function nest(depth: number, k: string): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : objectOf([[k, v]]);
  return v;
}

/** Every container in `v` with its path (bounded). */
function containers(
  v: unknown,
  path: (string | number)[] = [],
  out: { node: object; path: (string | number)[] }[] = [],
): typeof out {
  if (typeof v !== "object" || v === null || out.length > 400 || path.length > 40) return out;
  out.push({ node: v, path });
  if (Array.isArray(v)) v.forEach((c, i) => containers(c, [...path, i], out));
  else for (const k of Object.keys(v)) containers((v as Record<string, unknown>)[k], [...path, k], out);
  return out;
}

type Mutation = { pick: number; op: "set" | "delete" | "add"; key: string; value: unknown };
const mutation = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom<Mutation["op"]>("set", "set", "delete", "add"),
  key,
  value: replacement,
});

function mutate(doc: unknown, m: Mutation): void {
  const all = containers(doc);
  const { node } = all[m.pick % all.length]!;
  if (Array.isArray(node)) {
    if (node.length === 0 || m.op === "add") node.push(m.value);
    else if (m.op === "delete") node.splice(m.pick % node.length, 1);
    else node[m.pick % node.length] = m.value;
    return;
  }
  const obj = node as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (m.op === "add" || keys.length === 0)
    Object.defineProperty(obj, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
  else if (m.op === "delete") delete obj[keys[m.pick % keys.length]];
  else obj[keys[m.pick % keys.length]] = m.value;
}

/** A session document: a generated history, the golden values, then mutations. */
const documents = fc
  .record({
    messages: fc.nat({ max: 6 }),
    seed: fc.nat(),
    extra: fc.subarray(providerExamples.map((e) => e.value)),
    contents: fc.subarray(
      otherExamples.map((e) => e.value),
      { maxLength: 4 },
    ),
    mutations: fc.array(mutation, { maxLength: 3 }),
  })
  .map(({ messages, seed, extra, contents, mutations }) => {
    const session = structuredClone(makeSession({ messages, seed })) as unknown as {
      stateBag: Record<string, unknown>;
    };
    extra.forEach((v, i) => (session.stateBag[`p${i}`] = structuredClone(v)));
    // Valid members of the other families, where they can stand: AIContent in a message.
    const history = Object.values(session.stateBag).find((v) =>
      Array.isArray((v as { messages?: unknown }).messages),
    ) as { messages: { contents: unknown[] }[] } | undefined;
    if (history !== undefined && history.messages.length > 0)
      for (const c of contents) history.messages[0].contents.push(structuredClone(c));
    const doc = { format: "statebag.session", formatVersion: 1, session };
    // Inside the session: the envelope of a save is statebag's own, and loading reads it first.
    for (const m of mutations) mutate(doc.session, m);
    return doc;
  });

/** What the fused check leaves to today's path on purpose. */
function delegated(v: unknown, seen = 0): boolean {
  if (v === undefined) return true;
  if (typeof v !== "object" || v === null || seen > 400) return false;
  if (Array.isArray(v)) return v.some((c) => delegated(c, seen + 1));
  for (const k of Object.keys(v))
    if (k === "__proto__" || k === "quarantine" || delegated((v as Record<string, unknown>)[k], seen + 1)) return true;
  return false;
}

const registry = defaultRegistry();

/** Today's path on a parsed document: the limits walk, then the walker (migrations and preserved values count as "not as it is"). */
function todayLoad(doc: { session: unknown }, limits: JsonLimits): { ok: boolean; asIs: boolean; keys: number } {
  let keys: number;
  try {
    keys = checkedKeyCount(doc, resolveLimits(limits));
  } catch {
    return { ok: false, asIs: false, keys: -1 };
  }
  const walker = new SessionWalker({ registry, collectUpgrades: true });
  walker.walkSession(doc.session, ["session"]);
  const r = walker.result();
  return { ok: r.ok, asIs: r.ok && r.preserved.length === 0 && walker.upgrades!.length === 0, keys };
}

/** Today's path on a value about to be saved: the save-side limits and plain-data check, then the deep walk. */
function todaySave(doc: { session: unknown }, limits: JsonLimits): { ok: boolean; asIs: boolean } {
  try {
    checkWritableJson(doc, resolveLimits(limits));
  } catch {
    return { ok: false, asIs: false };
  }
  const walker = new SessionWalker({ registry, deep: true, quarantine: "keep", collectUpgrades: true });
  walker.walkSession(doc.session, ["session"]);
  const r = walker.result();
  // An older version or an unknown type is saved as it is after the walker's check: left to it.
  return { ok: r.ok, asIs: r.ok && r.preserved.length === 0 && walker.upgrades!.length === 0 };
}

describe("the fused check agrees with today's path", () => {
  it("fuses every generated type", () => {
    expect(unfusedTypes).toEqual([]);
  });

  for (const [name, limits] of [
    ["default limits", DEFAULT],
    ["small limits", SMALL],
  ] as const) {
    it(`on load (${name}): yes only when today's path accepts as it is, and wherever it does`, () => {
      const lim = fusedLimits(resolveLimits(limits), undefined, false)!;
      const seen = { yes: 0, no: 0 };
      fc.assert(
        fc.property(documents, (doc) => {
          // Loading reads JSON text: what JSON.stringify makes of the document, parsed again.
          let parsed: { session: unknown };
          let text: string;
          try {
            text = JSON.stringify(doc);
            parsed = JSON.parse(text) as { session: unknown };
          } catch {
            return;
          }
          const fused = fusedSessionDocument(parsed, "statebag.session", 1, true, lim);
          const today = todayLoad(parsed, limits);
          seen[fused !== undefined ? "yes" : "no"]++;
          if (fused !== undefined) {
            expect(today.asIs).toBe(true);
            expect(fused.keys).toBe(today.keys);
            // The duplicate-key check trusts this bound: never more than the text holds.
            expect(fused.chars).toBeLessThanOrEqual(text.length - escapeExtra(text));
          } else if (today.asIs && limits === DEFAULT) {
            // Under small limits the fused check may decline more (its limit tests are per function, conservative).
            expect(delegated(parsed)).toBe(true);
          }
        }),
        { numRuns: 600 },
      );
      // Not vacuous: both answers occur.
      expect(seen.yes).toBeGreaterThan(20);
      expect(seen.no).toBeGreaterThan(20);
    });

    it(`on save (${name}): yes only when today's save accepts, and wherever it does`, () => {
      const lim = fusedLimits(resolveLimits(limits), undefined, true)!;
      fc.assert(
        fc.property(documents, (doc) => {
          const fused = fusedSession(doc.session, 2, lim);
          const today = todaySave(doc, limits);
          if (fused) expect(today.asIs).toBe(true);
          else if (today.asIs && limits === DEFAULT) expect(delegated(doc)).toBe(true);
        }),
        { numRuns: 600 },
      );
    });
  }

  it("loads and saves give today's results through the public API", () => {
    // A composed registry holds the same definitions: fused. A copy of the types does not: today's path only.
    const slow = new TypeRegistry({
      source: "copy",
      types: generatedTypes.map((t) => ({ ...t })),
      migrations: generatedMigrations,
    });
    fc.assert(
      fc.property(documents, (doc) => {
        const outcome = (f: () => unknown) => {
          try {
            return { value: f() };
          } catch (e) {
            if (!(e instanceof SessionValidationError)) throw e;
            return { problems: e.problems.map((p) => [p.code, p.pointer]) };
          }
        };
        const save = (r: TypeRegistry) =>
          outcome(() => serializeSession(doc.session as never, { validate: true, registry: r }));
        expect(save(registry)).toEqual(save(slow));
        let text: { value?: unknown };
        try {
          text = { value: JSON.stringify(doc) };
        } catch {
          return; // a cycle the mutations made: no text to load
        }
        const load = (r: TypeRegistry) =>
          outcome(() => deserializeSession(text.value as string, { registry: r, strict: true }));
        expect(load(registry)).toEqual(load(slow));
      }),
      { numRuns: 300 },
    );
  });

  it("hostile text: duplicate keys, 1e400, deep nesting, __proto__ go the long way with today's errors", () => {
    const session = (inner: string) =>
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{"h":{"$type":"InMemoryChatHistoryState","$version":3,"droppedMessageCount":0,"branches":[],"branchPoints":[],"messages":[{"role":"user","contents":[{"$type":"text","text":"hi"${inner}}]}]}}}}`;
    const cases: [string, string][] = [
      [session(',"text":"again"'), "json"],
      [session(',"additionalProperties":{"a":1,"a":2}'), "json"],
      [session(',"additionalProperties":{"a":1e400}'), "not-json"],
      [session(`,"additionalProperties":{"a":${"[".repeat(300)}${"]".repeat(300)}}`), "json"],
      [session(',"createdAt":"2025-02-30T00:00:00Z"'), "schema"],
    ];
    for (const [text, code] of cases) {
      expect(loadError(text).problems[0].code).toBe(code);
    }
    // "__proto__" inside a value is data on load: the fused check declines, today's path accepts.
    const proto = session(',"additionalProperties":{"__proto__":{"a":1}}');
    const loaded = deserializeSession(proto) as unknown as {
      stateBag: { h: { messages: { contents: { additionalProperties: object }[] }[] } };
    };
    expect(Object.keys(loaded.stateBag.h.messages[0].contents[0].additionalProperties)).toEqual(["__proto__"]);
  });
});

describe("saving", () => {
  it("a polluted Object.prototype.toJSON, class instances and undefined take today's path", () => {
    const session = makeSession({ messages: 2 });
    const proto = Object.prototype as { toJSON?: unknown };
    proto.toJSON = () => "x";
    try {
      expect(() => serializeSession(session, { validate: true })).toThrow(SessionValidationError);
    } finally {
      delete proto.toJSON;
    }
    const withDate = structuredClone(session) as unknown as {
      stateBag: Record<string, { messages: { additionalProperties?: unknown }[] }>;
    };
    Object.values(withDate.stateBag)[0]!.messages[0]!.additionalProperties = { at: new Date(0) };
    expect(() => serializeSession(withDate as never, { validate: true })).toThrow(SessionValidationError);
    expect(serializeSession({ ...session, conversationId: undefined }, { validate: true })).toBe(
      serializeSession(session, { validate: true }),
    );
  });
});

/** How much longer the escapes of valid JSON `text` make it than the characters they stand for. */
function escapeExtra(text: string): number {
  let extra = 0;
  for (let i = text.indexOf("\\"); i !== -1; ) {
    const u = text[i + 1] === "u";
    extra += u ? 5 : 1;
    i = text.indexOf("\\", i + (u ? 6 : 2));
  }
  return extra;
}

describe("the character bound of the fused load (duplicate keys)", () => {
  const lim = fusedLimits(resolveLimits(DEFAULT), undefined, false)!;
  const withResult = (result: string) =>
    `{"format":"statebag.session","formatVersion":1,"session":{"id":"s1","kind":"local","stateBag":{"h":{"$type":"InMemoryChatHistoryState","$version":3,"messages":[{"role":"tool","contents":[{"$type":"functionResult","callId":"c1","result":${result}}]}],"droppedMessageCount":0,"branches":[],"branchPoints":[]}}}}`;
  const bound = (text: string) => {
    const counted = fusedSessionDocument(JSON.parse(text), "statebag.session", 1, true, lim);
    expect(counted, text).toBeDefined();
    return counted!.chars;
  };

  it("is exact on what JSON.stringify writes for the bench sessions, one and several", () => {
    for (const messages of [0, 10, 300]) {
      const session = makeSession({ messages });
      const text = serializeSession(session);
      expect(bound(text)).toBe(text.length - escapeExtra(text));
      const many = JSON.stringify({ format: "statebag.sessions", formatVersion: 1, sessions: [session, session] });
      const counted = fusedSessionsDocument(JSON.parse(many), "statebag.sessions", 1, lim);
      expect(counted!.keys).toBeGreaterThan(0);
      expect(counted!.chars).toBe(many.length);
    }
  });

  it("counts integers and one-decimal numbers at exactly what JSON.stringify writes", () => {
    const base = bound(withResult("0"));
    const exact = [
      0,
      1,
      9,
      10,
      99,
      100,
      999,
      1001,
      1234,
      99999,
      123456789,
      999999999,
      1e9 + 1,
      2 ** 31 - 1,
      2 ** 31 + 1,
    ];
    for (let x = 0.1; x < 1e5; x = x * 3.7 + 0.1) exact.push(Math.round(x * 10) / 10);
    for (const x of exact) {
      const s = JSON.stringify(x);
      expect(bound(withResult(s)) - base + 1, s).toBe(s.length);
    }
    // Three trailing zeros or more: "1e3" is shorter, so the bound counts it.
    expect(bound(withResult("1000")) - base + 1).toBe(3);
    expect(bound(withResult("2000000")) - base + 1).toBe(3);
  });

  it("counts every number at no more than its shortest spelling", () => {
    const numbers = [
      0,
      -0,
      7,
      -7,
      10,
      100,
      1200,
      1e6,
      -1e6,
      123456789,
      2 ** 53 - 1,
      2 ** 53,
      2 ** 60,
      1e21,
      1.5e300,
      0.5,
      -0.5,
      0.001,
      1e-7,
      1.5e-7,
      28.3,
      -12.5,
      13.75,
      0.1 + 0.2,
      Math.PI,
      5e-324,
      Number.MAX_VALUE,
      123.456e10,
      // The int32 and one-decimal shortcuts at their edges.
      999,
      1000,
      1001,
      9000,
      12000,
      999999,
      999999000,
      1e9,
      1e9 + 1,
      2 ** 31 - 1,
      2 ** 31,
      -1000,
      -999,
      0.1,
      0.3,
      9.9,
      10.1,
      99.9,
      999.9,
      9999.9,
      99999.9,
      100000.1,
      -28.3,
    ];
    fc.assert(
      fc.property(
        fc.oneof(fc.constantFrom(...numbers), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer()),
        (x) => {
          // Every spelling that reads back as x: the bound is at most the shortest.
          const spellings = [JSON.stringify(x), x.toExponential(), x.toExponential().replace("e+", "e")];
          for (let p = 1; p <= 21; p++) spellings.push(x.toPrecision(p), x.toExponential(p - 1).replace("e+", "e"));
          const [digits, exp] = x.toExponential().split("e");
          const mantissa = digits.replace(".", "");
          const fraction = digits.includes(".") ? digits.split(".")[1].length : 0;
          spellings.push(`${mantissa}e${Number(exp) - fraction}`);
          const base = bound(withResult("0"));
          for (const s of spellings) {
            if (Object.is(Number(s), x) || (x === 0 && Number(s) === 0)) {
              expect(JSON.parse(s)).toBe(Number(s));
              expect(bound(withResult(s)) - base + 1, `${x} as ${s}`).toBeLessThanOrEqual(s.length);
            }
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("versions", () => {
  it("the type checks hold $version themselves: any other version, or a missing one from version 2 on, is a no", () => {
    const lim = fusedLimits(resolveLimits(DEFAULT), undefined, false)!;
    for (const { type, value } of examples) {
      const v = value as Record<string, unknown>;
      expect(fusedValue(v, type.family, 1, lim), type.$type).toBe(true);
      const { $version: _, ...without } = v;
      expect(fusedValue(without, type.family, 1, lim), `${type.$type} without $version`).toBe(type.version === 1);
      for (const other of [type.version - 1, type.version + 1, String(type.version), null])
        expect(fusedValue({ ...v, $version: other }, type.family, 1, lim), `${type.$type} $version ${other}`).toBe(
          false,
        );
    }
  });
});

describe("fixtures", () => {
  it("every golden fixture of a latest version is accepted by the fused check", () => {
    const lim = fusedLimits(resolveLimits(DEFAULT), undefined, false)!;
    for (const { type, value } of examples) {
      const family = type.family === "ProviderState" ? value : undefined;
      if (family === undefined) continue;
      const doc = { format: "statebag.session", formatVersion: 1, session: { id: "s", stateBag: { x: value } } };
      expect(fusedSessionDocument(doc, "statebag.session", 1, true, lim), type.$type).toBeDefined();
    }
    expect(readdirSync(FIXTURES).length).toBeGreaterThan(0);
  });
});

describe("opaque values (json, with strings and numbers checked in the loops)", () => {
  const load = fusedLimits(resolveLimits(DEFAULT), undefined, false)!;
  const save = fusedLimits(resolveLimits(DEFAULT), undefined, true)!;
  const small = fusedLimits(resolveLimits({ maxDepth: 12, maxKeys: 8 }), undefined, false)!;
  const holding = (result: unknown, args: unknown) => ({
    id: "s1",
    kind: "local",
    stateBag: {
      h: {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
        messages: [
          {
            role: "tool",
            contents: [
              { $type: "functionCall", callId: "c1", name: "f", arguments: args },
              { $type: "functionResult", callId: "c1", result },
            ],
            additionalProperties: { x: result },
          },
        ],
      },
    },
  });
  const sparse: unknown[] = [1];
  sparse[2] = 3;

  it("declines every item or member today's path refuses, at any position", () => {
    const bad: unknown[] = [
      Number.NaN,
      Number.POSITIVE_INFINITY,
      -Infinity,
      undefined,
      () => 1,
      Symbol("s"),
      10n,
      new Date(0),
      new Map(),
      sparse,
    ];
    for (const x of bad)
      for (const wrap of [(v: unknown) => [v], (v: unknown) => ["a", 1, v], (v: unknown) => ({ a: "a", b: v })])
        for (const at of [(v: unknown) => v, (v: unknown) => ({ deep: [v] })]) {
          const v = at(wrap(x));
          expect(fusedSession(holding(v, {}), 2, save), String(x)).toBe(false);
          expect(fusedSession(holding({}, v), 2, save), String(x)).toBe(false);
          if (typeof x !== "object") expect(fusedSession(holding(v, {}), 2, load), String(x)).toBe(false);
        }
    // "__proto__" as a key, too many keys, too deep: the long way.
    expect(fusedSession(holding(JSON.parse('{"a":[{"__proto__":"x"}]}'), {}), 2, load)).toBe(false);
    const members = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i % 2 ? i : "v"]));
    expect(fusedSession(holding(members(9), {}), 2, small)).toBe(false);
    expect(fusedSession(holding([members(9)], {}), 2, small)).toBe(false);
    expect(fusedSession(holding(members(8), {}), 2, small)).toBe(true);
    let deep: unknown = "x";
    for (let i = 0; i < 12; i++) deep = [deep];
    expect(fusedSession(holding(deep, {}), 2, small)).toBe(false);
  });

  it("counts strings, numbers, literals and containers exactly as JSON.stringify writes them", () => {
    const values = [
      ["a", "", "\u00e9t\u00e9", 1, -2.5, 1200, 0.1 + 0.2, true, false, null, [], {}],
      { s: "x", n: 12.5, z: 0, t: true, f: false, u: null, a: ["y", 3, [4, "5"]], o: { k: "v", m: -1 } },
      [[["deep", 7]], { "": "" }],
      "top",
      3,
    ];
    for (const v of values) {
      const doc = { format: "statebag.session", formatVersion: 1, session: holding(v, { a: v }) };
      const text = JSON.stringify(doc);
      const counted = fusedSessionDocument(JSON.parse(text), "statebag.session", 1, true, load);
      expect(counted!.keys).toBeGreaterThan(0);
      expect(counted!.chars, JSON.stringify(v)).toBe(text.length - escapeExtra(text));
    }
  });
});

/**
 * Hostile session objects, one rule each: the walker reports the rule's problem, the fused check
 * says no on load and on save, and (for the local-session rule) the agent refuses the same sessions.
 * Written as JSON text and parsed, so "__proto__" is an own key as a loader sees it.
 */
describe("hostile session objects: the walker, the fused check and the agent apply the same rules", () => {
  const history = `{"$type":"InMemoryChatHistoryState","$version":3,"droppedMessageCount":0,"branches":[],"branchPoints":[],"messages":[{"role":"user","contents":[{"$type":"text","text":"hi"}]}]}`;
  const session = (members: string, bag = `{"h":${history}}`) => `{"id":"s1",${members}"stateBag":${bag}}`;
  const load = fusedLimits(resolveLimits(DEFAULT), undefined, false)!;
  const save = fusedLimits(resolveLimits(DEFAULT), undefined, true)!;
  /** [what, session text, the walker's problem (code and details.reason or code alone), or "preserved"] */
  const cases: [string, string, string][] = [
    ['"__proto__" as a state-bag key', session("", `{"__proto__":${history}}`), "session:proto-key"],
    [
      '"__proto__" as a conversation id name',
      session('"kind":"hosted","conversationId":{"__proto__":"c"},'),
      "session:proto-key",
    ],
    ['"__proto__" as a session key', session('"__proto__":{"isAdmin":true},'), "session:unknown-property"],
    ['"constructor" as a session key', session('"constructor":"x",'), "session:unknown-property"],
    ['"toString" as a session key', session('"toString":"x",'), "session:unknown-property"],
    ['"hasOwnProperty" as a session key', session('"hasOwnProperty":1,'), "session:unknown-property"],
    ["an empty id", '{"id":"","stateBag":{}}', "session:invalid"],
    ["a numeric id", '{"id":7,"stateBag":{}}', "session:invalid"],
    ["no id", '{"stateBag":{}}', "session:missing"],
    ["no state bag", '{"id":"s1"}', "session:missing"],
    ["an array state bag", '{"id":"s1","stateBag":[]}', "session:invalid"],
    ['"kind": "remote"', session('"kind":"remote",'), "session:invalid"],
    ['"kind": "local" with a conversationId', session('"kind":"local","conversationId":"c",'), "session:conflict"],
    [
      '"kind": "local" with an object conversationId',
      session('"kind":"local","conversationId":{"a":"c"},'),
      "session:conflict",
    ],
    ["a conversation id name holding a number", session('"conversationId":{"a":1},'), "session:invalid"],
    ["a quarantine section that is not an array", session('"quarantine":{},'), "session:invalid"],
    ['"$type": "toString"', session("", `{"h":{"$type":"toString"}}`), "preserved"],
    ['"$type": "__proto__"', session("", `{"h":{"$type":"__proto__"}}`), "preserved"],
    ['"$type": "constructor"', session("", `{"h":{"$type":"constructor","$version":1}}`), "preserved"],
    ['"$type" a number', session("", `{"h":{"$type":1}}`), "missing-type"],
    ["a value of another family in the state bag", session("", `{"h":{"$type":"text","text":"hi"}}`), "wrong-family"],
    [
      "a content of another family in a message",
      session(
        "",
        `{"h":${history.replace('"$type":"text","text":"hi"', '"$type":"InMemoryChatHistoryState","messages":[]')}}`,
      ),
      "wrong-family",
    ],
    ["a version too new", session("", `{"h":${history.replace('"$version":3', '"$version":99')}}`), "preserved"],
    [
      "a version too new, nested",
      session("", `{"h":${history.replace('"$type":"text"', '"$type":"text","$version":7')}}`),
      "preserved",
    ],
    ['"$version": "2"', session("", `{"h":${history.replace('"$version":3', '"$version":"2"')}}`), "invalid-version"],
    ['"$version": 0', session("", `{"h":${history.replace('"$version":3', '"$version":0')}}`), "invalid-version"],
    ['"$version": 1.5', session("", `{"h":${history.replace('"$version":3', '"$version":1.5')}}`), "invalid-version"],
  ];

  const walk = (value: unknown, strict: boolean) => {
    const walker = new SessionWalker({ registry, strict, collectUpgrades: true });
    walker.walkSession(value, ["session"]);
    return walker.result();
  };
  const problemName = (p: { code: string; details?: unknown }) => {
    const reason = (p.details as { reason?: string } | undefined)?.reason;
    return p.code === "session" ? `session:${reason}` : p.code;
  };

  it.each(cases)("%s", (_what, text, expected) => {
    const value = JSON.parse(text) as Record<string, unknown>;
    const doc = { format: "statebag.session", formatVersion: 1, session: value };
    const walked = walk(value, false);
    if (expected === "preserved") {
      expect(walked.problems).toEqual([]);
      expect(walked.preserved).toHaveLength(1);
      // Strict: the same value is a problem (an unknown type or a newer version).
      expect(walk(value, true).problems.map((p) => p.code)).toEqual([
        walked.preserved[0].reason === "newer-version" ? "newer-version" : "unknown-type",
      ]);
    } else {
      expect(walked.problems.map(problemName)).toContain(expected);
    }
    expect(fusedSessionDocument(doc, "statebag.session", 1, true, load)).toBeUndefined();
    expect(fusedSession(value, 2, save)).toBe(false);
    expect(validateSession(value).ok && validateSession(value).preserved.length === 0).toBe(false);
    // Through the public API: a strict load refuses it.
    expect(() => deserializeSession(JSON.stringify(doc), { strict: true })).toThrow(SessionValidationError);
  });

  it("the agent refuses exactly the sessions the walker reports as local with a conversation id", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient({ hosted: true }) });
    for (const kind of ["local", "hosted", undefined])
      for (const conversationId of ["c", { a: "c" }, undefined]) {
        const value = { id: "s1", kind, conversationId, stateBag: {} };
        const conflict = walk(value, false).problems.some((p) => problemName(p) === "session:conflict");
        let refused = false;
        try {
          agent.createSession({ kind, conversationId } as never);
        } catch (error) {
          if (!(error instanceof ConfigurationError)) throw error;
          refused = /local but carries a service conversation id/.test(error.message);
        }
        expect(refused, `${kind} ${JSON.stringify(conversationId)}`).toBe(conflict);
        expect(fusedSession(value, 2, save)).toBe(!conflict);
      }
  });

  it("a session with valid hostile-looking names is valid on both paths", () => {
    const value = JSON.parse(
      session(
        '"kind":"hosted","conversationId":{"constructor":"c","toString":"d"},',
        `{"constructor":${history},"toString":${history}}`,
      ),
    );
    expect(walk(value, true).problems).toEqual([]);
    expect(fusedSession(value, 2, save)).toBe(true);
    expect(
      fusedSessionDocument(
        { format: "statebag.session", formatVersion: 1, session: value },
        "statebag.session",
        1,
        true,
        load,
      )?.keys,
    ).toBeGreaterThan(0);
  });

  it("a family named after an Object.prototype member is no family: the fused check says no, the walker reports", () => {
    for (const family of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
      expect(fusedValue({ $type: "text", text: "hi" }, family, 1, load), family).toBe(false);
      const result = validateValue({ $type: "text", text: "hi" }, { family, strict: true });
      expect(result.ok, family).toBe(false);
    }
  });

  it("envelopes: a version too new, an invalid version, extra or prototype keys go the long way and fail", () => {
    const body = session('"kind":"local",');
    const envelopes: [string, string][] = [
      [`{"format":"statebag.session","formatVersion":2,"session":${body}}`, "/formatVersion"],
      [`{"format":"statebag.session","formatVersion":0,"session":${body}}`, "/formatVersion"],
      [`{"format":"statebag.session","formatVersion":"1","session":${body}}`, "/formatVersion"],
      [`{"format":"statebag.session","formatVersion":1.5,"session":${body}}`, "/formatVersion"],
      [`{"format":"statebag.session","formatVersion":1,"session":${body},"__proto__":{}}`, "/__proto__"],
      [`{"format":"statebag.session","formatVersion":1,"session":${body},"constructor":1}`, "/constructor"],
      [`{"format":"statebag.session","formatVersion":1,"sessions":[${body}]}`, "/sessions"],
      [`{"format":"statebag.sessions","formatVersion":1,"session":${body}}`, "/format"],
    ];
    for (const [text, pointer] of envelopes) {
      expect(fusedSessionDocument(JSON.parse(text), "statebag.session", 1, true, load), text).toBeUndefined();
      const error = loadError(text);
      expect(
        error.problems.map((p) => p.pointer),
        text,
      ).toContain(pointer);
    }
  });

  it("duplicate keys at the session, state and envelope level: the fused answer is not trusted, the load fails", () => {
    const texts = [
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"a","id":"b","stateBag":{"h":${history}}}}`,
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"a","stateBag":{},"stateBag":{"h":${history}}}}`,
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"a","kind":"hosted","kind":"local","stateBag":{}}}`,
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"a","stateBag":{"h":${history},"h":${history}}}}`,
      `{"format":"statebag.session","formatVersion":1,"session":{"id":"a","stateBag":{"h":${history.replace('"$version":3', '"$version":2,"$type":"acme.Other"')}}}}`,
      `{"format":"statebag.session","formatVersion":1,"formatVersion":1,"session":{"id":"a","stateBag":{}}}`,
    ];
    for (const text of texts) {
      const error = loadError(text);
      expect(error.problems[0].code, text).toBe("json");
    }
  });

  it("deep nesting: containers past the depth limit and tagged values past maxNesting go the long way and fail", () => {
    const deep = `${"[".repeat(300)}${"]".repeat(300)}`;
    const text = `{"format":"statebag.session","formatVersion":1,"session":${session("", `{"h":${history.replace('"text":"hi"', `"text":"hi","additionalProperties":{"a":${deep}}`)}}`)}}`;
    expect(() => deserializeSession(text)).toThrow(SessionValidationError);
    // Tagged values nested deeper than maxNesting (the state, its message contents, their annotations).
    const value = JSON.parse(session(""));
    expect(fusedSession(value, 2, { ...save, maxNesting: 0 })).toBe(false);
    expect(validateSession(value, { maxNesting: 0 }).problems.map((p) => p.code)).toContain("too-deep");
    for (let maxNesting = 0; maxNesting < 4; maxNesting++)
      expect(fusedSession(value, 2, { ...save, maxNesting }), `maxNesting ${maxNesting}`).toBe(
        validateSession(value, { maxNesting }).ok,
      );
    expect(validateSession(value, { maxNesting: 3 }).ok).toBe(true);
  });
});

/** The error loading `text` throws (it must throw a `SessionValidationError`). */
function loadError(text: string): SessionValidationError {
  try {
    deserializeSession(text);
  } catch (error) {
    if (error instanceof SessionValidationError) return error;
    throw error;
  }
  throw new Error(`expected loading to fail: ${text}`);
}
