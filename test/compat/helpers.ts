import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Change } from "../../generator/compat/rule-catalogue.js";

/** A closed, typescript-json-schema-like schema of a tagged type, with the generator's `x-statebag`. */
export function typeSchema(
  $type: string,
  version: number,
  properties: Record<string, unknown>,
  required: string[],
  options: { family?: string; extra?: Record<string, unknown>; meta?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const versionProp = { type: "number", const: version };
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { $type: { type: "string", const: $type }, $version: versionProp, ...properties },
    additionalProperties: false,
    required: ["$type", ...(version > 1 ? ["$version"] : []), ...required],
    "x-statebag": { family: options.family ?? "ProviderState", $type, version, ...options.meta },
    ...options.extra,
  };
}

/** A throw-away project: `schemas/` and `test/fixtures/` under a temp dir. */
export class TempProject {
  readonly root = fs.mkdtempSync(path.join(os.tmpdir(), "statebag-compat-"));
  readonly schemasDir = path.join(this.root, "schemas");
  readonly fixturesDir = path.join(this.root, "test", "fixtures");

  private write(file: string, value: unknown): string {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2) + "\n");
    return file;
  }

  current(schema: Record<string, unknown>): string {
    const meta = schema["x-statebag"] as { family: string; $type: string };
    return this.write(path.join(this.schemasDir, meta.family, `${meta.$type}.schema.json`), schema);
  }

  removeCurrent(family: string, $type: string): void {
    fs.rmSync(path.join(this.schemasDir, family, `${$type}.schema.json`));
  }

  frozen(schema: Record<string, unknown>): string {
    const meta = schema["x-statebag"] as { family: string; $type: string; version: number };
    return this.write(this.frozenPath(meta.family, meta.$type, meta.version), schema);
  }

  frozenPath(family: string, $type: string, version: number): string {
    return path.join(this.schemasDir, "history", family, $type, `v${version}.schema.json`);
  }

  /** The generator's step: current schema written, and frozen when that version has no frozen file yet. */
  generate(schema: Record<string, unknown>): void {
    this.current(schema);
    const meta = schema["x-statebag"] as { family: string; $type: string; version: number };
    if (!fs.existsSync(this.frozenPath(meta.family, meta.$type, meta.version))) this.frozen(schema);
  }

  fixture($type: string, name: string, value: unknown): string {
    return this.write(path.join(this.fixturesDir, $type, name), value);
  }

  file(rel: string): string {
    return path.join(this.root, rel);
  }

  read(rel: string): unknown {
    return JSON.parse(fs.readFileSync(this.file(rel), "utf8"));
  }

  cleanup(): void {
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/** Changes reduced to `rule@pointer` strings, for compact assertions. */
export function rules(changes: readonly Change[]): string[] {
  return changes.map((c) => `${c.rule}@${c.pointer}`).sort();
}

export function kinds(changes: readonly Change[]): string[] {
  return [...new Set(changes.map((c) => c.kind))].sort();
}
