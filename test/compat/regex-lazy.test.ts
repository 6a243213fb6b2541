/** On-the-fly inclusion (issue #26): a counterexample found in the lazily built product, before any whole DFA. */
import { describe, expect, it } from "vitest";
import { patternIncludes } from "../../generator/compat/regex.js";
import { diffSchemas } from "../../generator/compat/diff.js";
import { probeOf } from "../../generator/compat/rule-catalogue.js";

const OLD = "^(a|b)*a(a|b){12}$";

describe("lazy regular-language inclusion", () => {
  it("decides a pattern whose complete DFA is too large: breaking, with a witness string", () => {
    const outcome = patternIncludes({ patterns: [OLD] }, "^(a|b)*a(a|b){11}$");
    expect(outcome.kind).toBe("excluded");
    const w = (outcome as { witness: string }).witness;
    expect(new RegExp(OLD, "u").test(w)).toBe(true);
    expect(/^(a|b)*a(a|b){11}$/u.test(w)).toBe(false);
    const change = diffSchemas(
      { type: "string", pattern: OLD },
      { type: "string", pattern: "^(a|b)*a(a|b){11}$" },
    ).find((c) => c.kind === "breaking")!;
    expect(change).toMatchObject({ rule: "tighten-constraint", keyword: "pattern" });
    expect(probeOf(change)).toEqual({ value: w });
  });
  it("an equivalent rewrite of the same pattern is compatible", () => {
    expect(patternIncludes({ patterns: [OLD] }, "^[ab]*a[ab]{12}$")).toEqual({ kind: "included" });
    const changes = diffSchemas(
      { type: "string", pattern: OLD },
      { type: "string", pattern: "^(?:b|a)*a(?:[ab]){12}$" },
    );
    expect(changes.every((c) => c.kind === "compatible")).toBe(true);
  });
});
