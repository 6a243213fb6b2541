/**
 * A generated corpus (issue #26): for each keyword family, schema pairs built by mutating the
 * project's own schemas (schemas/**\/*.schema.json), seeded. Each mutation gives a tighter and a
 * looser schema; both directions are assessed. Ground truth comes from the validators, never from
 * the analysis: a `breaking` verdict must carry a witness that ajv accepts under the old schema and
 * rejects under the new one; a `compatible` verdict must have been sampled (documents drawn from
 * the old schema, every one accepted by the new). The looser direction (tight -> loose) can never
 * be breaking. Counts by family and verdict are printed.
 */
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type AssessedChange, assessCompatibility } from "../../generator/compat/assess.js";
import { bundleSchema, compileBundled } from "../../generator/compat/bundle.js";
import { type JsonSchema, type SchemaDoc, canonicalJson, isObject } from "../../generator/compat/schema.js";

const SEED = 26;
/** Mutation sites per family (both directions are assessed for each). */
const SITES = 3;
const REPO = path.resolve(import.meta.dirname, "../..");

type Obj = Record<string, unknown>;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function schemaFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? schemaFiles(path.join(dir, e.name))
        : e.name.endsWith(".schema.json")
          ? [path.join(dir, e.name)]
          : [],
    )
    .sort();
}

const SUBSCHEMA_MAPS = ["properties", "definitions", "$defs", "patternProperties"];
const SUBSCHEMA_ONE = ["items", "additionalProperties", "additionalItems", "not", "contains", "propertyNames"];
const SUBSCHEMA_LIST = ["anyOf", "oneOf", "allOf", "items"];

/** Every schema object of a document with its path of keys from the root. */
function nodes(root: unknown): { node: Obj; at: string[] }[] {
  const out: { node: Obj; at: string[] }[] = [];
  const walk = (node: unknown, at: string[]): void => {
    if (!isObject(node)) return;
    out.push({ node, at });
    for (const k of SUBSCHEMA_MAPS)
      if (isObject(node[k])) for (const [name, child] of Object.entries(node[k] as Obj)) walk(child, [...at, k, name]);
    for (const k of SUBSCHEMA_ONE) if (isObject(node[k])) walk(node[k], [...at, k]);
    for (const k of SUBSCHEMA_LIST)
      if (Array.isArray(node[k])) (node[k] as unknown[]).forEach((child, i) => walk(child, [...at, k, String(i)]));
  };
  walk(root, []);
  return out;
}

function replaced(root: unknown, at: readonly string[], node: Obj): JsonSchema {
  if (at.length === 0) return node as JsonSchema;
  const copy = structuredClone(root) as Obj;
  let parent: Obj = copy;
  for (const key of at.slice(0, -1)) parent = parent[key] as Obj;
  parent[at[at.length - 1]!] = node;
  return copy as JsonSchema;
}

const typeOf = (n: Obj): string[] =>
  typeof n.type === "string" ? [n.type] : Array.isArray(n.type) ? (n.type as string[]) : [];
const plain = (n: Obj): boolean => !("enum" in n) && !("const" in n) && n.$ref === undefined;

/** A keyword family: where it applies, and the (tighter, looser) pair of that node. */
interface Family {
  name: string;
  mutate(n: Obj): { tight: Obj; loose: Obj } | undefined;
}

const FAMILIES: Family[] = [
  {
    name: "required",
    mutate(n) {
      const props = isObject(n.properties) ? Object.keys(n.properties) : [];
      const required = Array.isArray(n.required) ? (n.required as string[]) : [];
      const optional = props.find((p) => !required.includes(p));
      return optional === undefined ? undefined : { tight: { ...n, required: [...required, optional] }, loose: n };
    },
  },
  {
    name: "properties (closed object)",
    mutate(n) {
      if (n.additionalProperties !== false || !isObject(n.properties)) return undefined;
      const required = Array.isArray(n.required) ? (n.required as string[]) : [];
      const optional = Object.keys(n.properties).find((p) => !required.includes(p));
      if (optional === undefined) return undefined;
      const { [optional]: _removed, ...rest } = n.properties as Obj;
      return { tight: { ...n, properties: rest }, loose: n };
    },
  },
  {
    name: "type",
    mutate(n) {
      const t = typeOf(n);
      if (t.length !== 1 || !plain(n)) return undefined;
      if (t[0] === "number") return { tight: { ...n, type: "integer" }, loose: n };
      if (t[0] === "string" || t[0] === "integer" || t[0] === "boolean")
        return { tight: n, loose: { ...n, type: [t[0], "null"] } };
      return undefined;
    },
  },
  {
    name: "enum / const",
    mutate(n) {
      if (Array.isArray(n.enum) && n.enum.length >= 2) return { tight: { ...n, enum: n.enum.slice(0, -1) }, loose: n };
      if ("const" in n && typeof n.const === "string") {
        const { const: value, ...rest } = n;
        return { tight: n, loose: { ...rest, enum: [value, `${value as string}-other`] } };
      }
      return undefined;
    },
  },
  {
    name: "numbers",
    mutate(n) {
      if (!typeOf(n).some((t) => t === "number" || t === "integer") || !plain(n)) return undefined;
      const min = typeof n.minimum === "number" ? n.minimum : 0;
      return { tight: { ...n, minimum: min + 1, multipleOf: 1 }, loose: n };
    },
  },
  {
    name: "string lengths",
    mutate(n) {
      if (!typeOf(n).includes("string") || !plain(n) || n.format !== undefined || n.pattern !== undefined)
        return undefined;
      return { tight: { ...n, minLength: 2, maxLength: 6 }, loose: n };
    },
  },
  {
    name: "pattern / format",
    mutate(n) {
      if (!typeOf(n).includes("string") || !plain(n) || n.pattern !== undefined) return undefined;
      if (n.format === "date-time") return { tight: n, loose: { ...n, format: undefined } };
      return { tight: { ...n, pattern: "^[a-z]*$" }, loose: n };
    },
  },
  {
    name: "arrays",
    mutate(n) {
      if (!typeOf(n).includes("array")) return undefined;
      const min = typeof n.minItems === "number" ? n.minItems : 0;
      return { tight: { ...n, minItems: min + 1, maxItems: min + 3 }, loose: n };
    },
  },
  {
    name: "additionalProperties",
    mutate(n) {
      if (!isObject(n.properties)) return undefined;
      if (n.additionalProperties === false)
        return { tight: n, loose: { ...n, additionalProperties: { type: "string" } } };
      return { tight: { ...n, additionalProperties: false }, loose: n };
    },
  },
  {
    name: "object sizes",
    mutate(n) {
      if (!isObject(n.properties)) return undefined;
      const required = Array.isArray(n.required) ? n.required.length : 0;
      if (Object.keys(n.properties).length <= required) return undefined;
      return { tight: { ...n, maxProperties: required }, loose: n };
    },
  },
];

describe("generated corpus: the project's schemas, mutated keyword family by keyword family", () => {
  it("breaking verdicts carry ajv-checked witnesses, compatible ones were sampled, loosening never breaks", {
    timeout: 120_000,
  }, () => {
    const started = performance.now();
    const files = schemaFiles(path.join(REPO, "schemas"));
    expect(files.length).toBeGreaterThan(10);
    const docs = new Map<string, SchemaDoc | undefined>();
    const read = (file: string): SchemaDoc | undefined => {
      if (!docs.has(file)) {
        try {
          docs.set(file, { root: JSON.parse(fs.readFileSync(file, "utf8")) as JsonSchema, base: file });
        } catch {
          docs.set(file, undefined);
        }
      }
      return docs.get(file);
    };
    const resolveExternalRef = (ref: string, base: string | undefined): SchemaDoc | undefined =>
      read(path.resolve(base ? path.dirname(base) : REPO, decodeURIComponent(ref)));
    const validators = new Map<string, (doc: unknown) => boolean>();
    const validator = (schema: JsonSchema, base: string): ((doc: unknown) => boolean) => {
      const bundled = bundleSchema(schema, base, resolveExternalRef);
      const key = canonicalJson(bundled);
      let v = validators.get(key);
      if (!v) {
        const compiled = compileBundled(bundled);
        if ("error" in compiled) throw new Error(compiled.error);
        v = (doc) => compiled.validate(doc) === true;
        validators.set(key, v);
      }
      return v;
    };

    const random = mulberry32(SEED);
    const counts: Record<string, Record<string, number>> = {};
    let witnesses = 0;
    let sampled = 0;
    for (const family of FAMILIES) {
      const sites = files.flatMap((file) =>
        nodes(read(file)!.root).flatMap(({ node, at }) => (family.mutate(node) ? [{ file, at, node }] : [])),
      );
      expect(sites.length, `no site for ${family.name}`).toBeGreaterThan(0);
      const row = (counts[family.name] = {
        breaking: 0,
        undecided: 0,
        compatible: 0,
        "loosening: compatible": 0,
        "loosening: undecided": 0,
      });
      for (let i = 0; i < SITES && sites.length > 0; i++) {
        const { file, at, node } = sites.splice(Math.floor(random() * sites.length), 1)[0]!;
        const { tight, loose } = family.mutate(node)!;
        const root = read(file)!.root;
        const [tightSchema, looseSchema] = [replaced(root, at, tight), replaced(root, at, loose)];
        const options = {
          oldBase: file,
          newBase: file,
          resolveExternalRef,
          samples: 40,
          seed: SEED + i,
          timeBudgetMs: 1000,
        };
        const where = `${family.name}: ${path.relative(REPO, file)} #/${at.join("/")}`;

        const narrowing = assessCompatibility(looseSchema, tightSchema, options);
        row[narrowing.verdict]++;
        const loosening = assessCompatibility(tightSchema, looseSchema, options);
        expect(
          loosening.verdict,
          `${where}: loosening reported breaking ${JSON.stringify(loosening.changes.filter((c) => c.kind === "breaking"))}`,
        ).not.toBe("breaking");
        row[`loosening: ${loosening.verdict as "compatible" | "undecided"}`]++;

        for (const [a, oldSchema, newSchema] of [
          [narrowing, looseSchema, tightSchema],
          [loosening, tightSchema, looseSchema],
        ] as const) {
          if (a.verdict === "breaking") {
            const shown = a.changes.filter((c: AssessedChange) => c.kind === "breaking");
            expect(
              shown.every((c) => c.witness !== undefined || c.rule === "change-slot-family" || c.rule === "ref-change"),
              where,
            ).toBe(true);
            for (const c of shown.filter((c) => c.witness)) {
              expect(
                validator(oldSchema, file)(c.witness!.document),
                `${where}: the old schema must accept the witness`,
              ).toBe(true);
              expect(
                validator(newSchema, file)(c.witness!.document),
                `${where}: the new schema must reject the witness`,
              ).toBe(false);
              witnesses++;
            }
          }
          if (a.verdict === "compatible" && a.changes.length > 0) {
            expect(a.sampling, `${where}: a compatible verdict is sampled`).toBeDefined();
            expect(a.sampling!.drawn, `${where}: ${a.sampling!.warning ?? ""}`).toBeGreaterThan(0);
            expect(a.sampling!.accepted).toBe(a.sampling!.drawn);
            sampled += a.sampling!.drawn;
          }
        }
      }
    }
    const total = Object.values(counts).reduce((s, r) => s + r.breaking + r.undecided + r.compatible, 0);
    const breaking = Object.values(counts).reduce((s, r) => s + r.breaking, 0);
    console.log(
      [
        `compat corpus (seed ${SEED}, ${files.length} schema files, ${SITES} sites per family, ${Math.round(performance.now() - started)} ms):`,
        ...Object.entries(counts).map(
          ([name, r]) =>
            `  ${name.padEnd(28)} ${Object.entries(r)
              .map(([k, v]) => `${k} ${v}`)
              .join(", ")}`,
        ),
        `  narrowing pairs: ${total}, breaking ${breaking}; ${witnesses} witnesses checked by ajv; ${sampled} sampled documents accepted`,
      ].join("\n"),
    );
    // Tightenings built to reject stored values are found as such (with a witness) in most cases.
    expect(breaking).toBeGreaterThanOrEqual(Math.floor(total / 2));
  });
});
