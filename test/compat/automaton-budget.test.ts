/**
 * An undecided change names the automaton-size budget when, and only when, the string analysis ran
 * out of it: the budget is data the analysis passes along to the change it records, never read back
 * from the change's text (a pattern that merely contains the words is not a budget that ran out).
 */
import { describe, expect, it } from "vitest";
import { stringIncludes } from "../../generator/compat/regex.js";
import { budgetOf, type Change, emitAt } from "../../generator/compat/rule-catalogue.js";

describe("the automaton-size budget", () => {
  it("string constraints too large for the automaton budget: undecided, naming the budget", () => {
    const outcome = stringIncludes({ patterns: ["^(a|b)*a(a|b){40}$"], maxLength: 900 }, { patterns: ["^a"] });
    expect(outcome).toMatchObject({ kind: "undecided", budget: "automaton-size" });
  });

  it("a pattern that can not be analysed is undecided without a budget, whatever its text says", () => {
    const outcome = stringIncludes(
      { patterns: ["^(?!too large to analyse)[a-z]+$"], maxLength: 10 },
      { patterns: ["^t"] },
    );
    expect(outcome.kind).toBe("undecided");
    // Its reason quotes the pattern, words and all; the old check read the budget from this text.
    expect(outcome.kind === "undecided" && outcome.reason).toContain("too large to analyse");
    expect(outcome).not.toHaveProperty("budget");
  });

  it("the recorded change carries the budget hidden, as its probe rides (not in its JSON)", () => {
    const out: Change[] = [];
    emitAt({ pointer: "", out } as Parameters<typeof emitAt>[0])(
      "cannot-decide",
      "propertyNames: too large to analyse",
      "propertyNames",
      undefined,
      "automaton-size",
    );
    emitAt({ pointer: "", out } as Parameters<typeof emitAt>[0])(
      "cannot-decide",
      "propertyNames: string constraints too large to analyse",
      "propertyNames",
    );
    expect(out.map(budgetOf)).toEqual(["automaton-size", undefined]);
    expect(JSON.parse(JSON.stringify(out[0]))).not.toHaveProperty("budget");
  });
});
