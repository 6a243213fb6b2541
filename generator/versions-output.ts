/**
 * The generated modules made from the frozen schema history on every run, cached or not (the
 * history is no cache input): `versions.ts`, a type per stored version, and `stored-versions.ts`,
 * the frozen schemas migrations read.
 */
import type { CacheEntry } from "./cache.js";
import { moduleOutput, schemaOutput, type Config } from "./config.js";
import {
  historyFile,
  storedVersionsModule,
  versionsModule,
  type EmittedStoredVersion,
  type EmittedVersion,
} from "./emit.js";
import { compareStrings } from "./errors.js";
import { memberFile } from "./schema-files.js";

export interface VersionTypes {
  outputs: Record<string, string>;
  /** Version type name by lock key, for `recordNames`. */
  names: Record<string, string>;
  /** Lock keys of frozen files without a recorded name. */
  unrecorded: string[];
}

/**
 * `versions.ts`: a type per stored version, from the frozen history (and the current schema for
 * the latest version). History files this run creates are taken from its outputs.
 *
 * Names are part of the user's code (migrations import them), so a version keeps the name it got
 * first: it is recorded in the history lock (`names`) and never given to another version. A new
 * version is named after its type's declaration (`<Name>_v<N>`, `<Name>_<k>_v<N>` when taken).
 */
export async function versionTypesOutput(cfg: Config, entry: CacheEntry): Promise<VersionTypes> {
  const { readFrozenSchemas, readLock } = await import("./compat/history.js");
  const { versionTypeDeclaration } = await import("./version-types.js");
  const schemas = new Map<
    string,
    { family: string; $type: string; version: number; schema: unknown; from: string; frozen: boolean }
  >();
  const lockKey = (family: string, $type: string, version: number) =>
    historyFile(family, $type, version).slice("history/".length);
  for (const frozenSchema of readFrozenSchemas(cfg.schemasDir)) {
    if (frozenSchema.schema === undefined) continue;
    schemas.set(frozenSchema.key, {
      family: frozenSchema.family,
      $type: frozenSchema.$type,
      version: frozenSchema.version,
      schema: frozenSchema.schema,
      from: schemaOutput(cfg, historyFile(frozenSchema.family, frozenSchema.$type, frozenSchema.version)),
      frozen: true,
    });
  }
  const declared = new Map<string, string>();
  for (const type of entry.types) {
    declared.set(type.$type, type.name);
    // The latest version as the current schema describes it (a compatible change at the same version widens the frozen one).
    const file = schemaOutput(cfg, memberFile(type.family, type.$type));
    const text = entry.outputs[file];
    const key = lockKey(type.family, type.$type, type.version);
    if (text !== undefined)
      schemas.set(key, {
        family: type.family,
        $type: type.$type,
        version: type.version,
        schema: JSON.parse(text),
        from: file,
        frozen: schemas.has(key),
      });
  }
  const base = (s: { $type: string; schema: unknown }): string => {
    const known = declared.get(s.$type);
    if (known) return known;
    const title =
      typeof s.schema === "object" && s.schema !== null ? (s.schema as { title?: unknown }).title : undefined;
    const raw = typeof title === "string" ? title : s.$type.slice(s.$type.lastIndexOf(".") + 1);
    const name = raw.replace(/[^A-Za-z0-9_$]/g, "_");
    return /^[0-9]/.test(name) ? `_${name}` : name;
  };
  const recorded = readLock(cfg.schemasDir).names ?? {};
  const names: Record<string, string> = {};
  const used = new Set(["TaggedValue", ...Object.values(recorded)]);
  const sorted = [...schemas].sort(([, a], [, b]) => compareStrings(a.$type, b.$type) || a.version - b.version);
  for (const [key, summary] of sorted) {
    let name = recorded[key];
    if (name === undefined) {
      name = `${base(summary)}_v${summary.version}`;
      for (let n = 2; used.has(name); n++) name = `${base(summary)}_${n}_v${summary.version}`;
      used.add(name);
    }
    names[key] = name;
  }
  const versions: EmittedVersion[] = sorted.map(([key, s]) => ({
    $type: s.$type,
    version: s.version,
    name: names[key]!,
    schema: s.schema,
    from: s.from,
  }));
  const content = versionsModule(versions, cfg.module, (v) =>
    versionTypeDeclaration({
      name: v.name,
      summary: `"${v.$type}" version ${v.version}, as stored (${v.from}).`,
      schema: v.schema,
    }),
  );
  const unrecorded = sorted.filter(([key, s]) => s.frozen && recorded[key] === undefined).map(([key]) => key);
  // The versions migrations read, with their frozen schema, for the runtime's check before a step.
  const { storedSchema } = await import("./stored-schema.js");
  const owner = new Map<string, string>();
  for (const type of entry.types)
    for (const formerName of [type.$type, ...(type.formerNames ?? [])]) owner.set(formerName, type.$type);
  const stored: EmittedStoredVersion[] = [];
  for (const migration of entry.migrations ?? []) {
    const family = entry.types.find((t) => t.$type === owner.get(migration.type))?.family;
    const frozen = family !== undefined ? schemas.get(lockKey(family, migration.type, migration.from)) : undefined;
    if (!frozen?.frozen) continue;
    stored.push({
      owner: owner.get(migration.type)!,
      $type: migration.type,
      version: migration.from,
      file: frozen.from,
      schema: storedSchema(frozen.schema),
    });
  }
  return {
    outputs: {
      [moduleOutput(cfg, "versions.ts")]: content,
      [moduleOutput(cfg, "stored-versions.ts")]: storedVersionsModule(stored, cfg.module),
    },
    names,
    unrecorded,
  };
}
