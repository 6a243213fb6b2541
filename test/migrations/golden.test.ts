/**
 * Golden fixtures: for every type and every version ever frozen, a value exactly as it was stored
 * (`test/fixtures/<$type>/v<N>.json`). Each must match its own version's frozen schema, migrate to
 * the latest version, and validate there (nested values included). A fixture that stops loading
 * means a change broke sessions already stored.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fixtureFiles, validateFixture } from "../../generator/compat/check.js";
import { readFrozenSchemas } from "../../generator/compat/history.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { deserializeSession } from "../../src/runtime/persistence/serialization.js";
import { validateValue } from "../../src/runtime/validation/validate.js";
import { FIXTURES, SCHEMAS, envelope } from "./helpers.js";
import fs from "node:fs";

const registry = defaultRegistry();
const frozen = readFrozenSchemas(SCHEMAS);
const cases = frozen.flatMap((f) =>
  fixtureFiles(path.join(FIXTURES, f.$type), f.version).map((file) => ({
    ...f,
    fixture: file,
    name: `${f.$type} v${f.version} (${path.basename(file)})`,
  })),
);

describe("golden fixtures", () => {
  it("every registered type has frozen history up to its current version, and a fixture for each version", () => {
    const missing: string[] = [];
    for (const def of registry.types()) {
      for (let v = 1; v <= def.version; v++) {
        if (!frozen.some((f) => f.$type === def.$type && f.version === v))
          missing.push(`${def.$type} v${v}: no frozen schema`);
        if (fixtureFiles(path.join(FIXTURES, def.$type), v).length === 0)
          missing.push(`${def.$type} v${v}: no fixture`);
      }
    }
    expect(missing).toEqual([]);
    expect(cases.length).toBeGreaterThanOrEqual(registry.types().length);
  });

  it.each(cases)(
    "$name matches its own frozen schema, migrates to the latest version and validates",
    ({ $type, version, schema, fixture, family }) => {
      expect(validateFixture(fixture, $type, version, schema!)).toEqual([]);
      const stored = JSON.parse(fs.readFileSync(fixture, "utf8"));
      const snapshot = structuredClone(stored);
      const def = registry.get($type)!;
      const latest = registry.upgrade<Record<string, unknown>>(stored, "");
      expect(stored).toEqual(snapshot); // migrating never touches the stored value
      expect(latest.$type).toBe(def.$type);
      expect(latest.$version ?? 1).toBe(def.version);
      if (version === def.version) expect(latest).toBe(stored);
      const checked = validateValue(latest, { registry, family, strict: true });
      expect(checked.problems).toEqual([]);
      // The same, loading it inside a stored session (the walker migrates nested values too).
      if (family === "ProviderState") {
        const session = deserializeSession(envelope({ id: "golden", stateBag: { state: stored } }), { strict: true });
        expect(session.stateBag.state).toEqual(latest);
      }
    },
  );
});
