/**
 * Every fix text (and hint) the generator, the compatibility check and the runtime's persistence
 * rooms (persistence/, json/, registry/, validation/) print must name only things a user can run:
 * a `statebag` command and its flags, a flag of `npm run gen`, or a function exported from one of
 * statebag's public entry points. A fix that names an internal helper (`retireType(...)`) sends users nowhere.
 *
 * The texts are read from the source (every string and template piece under a `fix:` / `hint:`
 * property or passed as an error's hint), so a new fix text is covered without listing it here.
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { REPO } from "./helpers.js";

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(REPO, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The literal text of an expression: string and template pieces joined, `${...}` as `…`. */
function literalText(node: ts.Node): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) out.push(n.text);
    else if (ts.isTemplateExpression(n)) {
      out.push([n.head.text, ...n.templateSpans.map((s) => s.literal.text)].join("…"));
      n.templateSpans.forEach((s) => visit(s.expression));
    } else n.forEachChild(visit);
  };
  visit(node);
  return out;
}

interface FixText {
  where: string;
  text: string;
}

/** Texts under `fix:` / `hint:` properties, the hint of `fail(step, message, hint)`, and the second argument of `new XxxError(message, hint)`. */
function fixTexts(): FixText[] {
  const out: FixText[] = [];
  const files = [
    ...sourceFiles("generator"),
    ...["persistence", "json", "registry", "validation"].flatMap((room) => sourceFiles(`src/runtime/${room}`)),
  ];
  for (const file of files) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const where = (n: ts.Node) =>
      `${path.relative(REPO, file)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
    const visit = (n: ts.Node): void => {
      if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && (n.name.text === "fix" || n.name.text === "hint")) {
        for (const text of literalText(n.initializer)) out.push({ where: where(n), text });
      }
      // generator/migrations.ts: fail(step, message, hint)
      if (
        ts.isCallExpression(n) &&
        ts.isIdentifier(n.expression) &&
        n.expression.text === "fail" &&
        n.arguments.length >= 3
      ) {
        for (const text of literalText(n.arguments[2]!)) out.push({ where: where(n), text });
      }
      if (ts.isNewExpression(n) && /Error$/.test(n.expression.getText(sf)) && n.arguments && n.arguments.length >= 2) {
        for (const text of literalText(n.arguments[1]!)) out.push({ where: where(n), text });
      }
      n.forEachChild(visit);
    };
    visit(sf);
  }
  return out;
}

/** Every value exported by a public entry point (package.json "exports"). */
function publicExports(): Set<string> {
  const snapshot = JSON.parse(fs.readFileSync(path.join(REPO, "test/api/exports.snapshot.json"), "utf8")) as Record<
    string,
    { values?: string[]; types?: string[] }
  >;
  return new Set(Object.values(snapshot).flatMap((e) => [...(e.values ?? []), ...(e.types ?? [])]));
}

/** `statebag <command>` -> its flags, read from the CLI's command modules. */
function cliCommands(): Map<string, Set<string>> {
  const commands = new Map<string, Set<string>>();
  for (const file of sourceFiles("src/cli/commands")) {
    const text = fs.readFileSync(file, "utf8");
    const flags = new Set([...text.matchAll(/\.option\(\s*"(--[a-z-]+)/g)].map((m) => m[1]!));
    if (/jsonOption\(\)/.test(text)) flags.add("--json");
    for (const m of text.matchAll(/\.command\(\s*"([a-z-]+)"\s*\)/g)) commands.set(m[1]!, flags);
  }
  return commands;
}

/** Constructs a fix text may show that are not statebag's: JSON Schema / TypeBox / JavaScript. */
const NOT_STATEBAG = new Set([
  "Type.Object",
  "Type.Record",
  "JSON.stringify",
  "up",
  "defineMigration",
  "structuredClone",
]);
/** Instances a fix text may call a method of, by the exported class they are. */
const INSTANCES: Record<string, string> = { registry: "TypeRegistry" };

describe("fix texts name only what a user can run", () => {
  const texts = fixTexts();
  const exported = publicExports();
  const commands = cliCommands();

  it("finds the fix texts (the scan itself works)", () => {
    expect(texts.length).toBeGreaterThan(50);
    expect(texts.some((t) => t.text.includes("--scaffold-fixtures"))).toBe(true);
    expect(
      texts.some(
        (t) =>
          t.where.startsWith("generator/migrations.ts") && t.text.includes("declare the type, or, if it was renamed"),
      ),
    ).toBe(true);
  });

  it("every function called in a fix text is exported by a public entry point", () => {
    const problems: string[] = [];
    for (const { where, text } of texts) {
      for (const m of text.matchAll(/(?<![\w.$-])((?:[A-Za-z_$][\w$]*\.)?[a-z_$][\w$]*)\(/g)) {
        const name = m[1]!;
        if (NOT_STATEBAG.has(name) || exported.has(name) || exported.has(name.split(".")[0]!)) continue;
        const [instance, method] = name.split(".");
        if (
          method &&
          INSTANCES[instance!] &&
          exported.has(INSTANCES[instance!]!) &&
          typeof (TypeRegistry.prototype as unknown as Record<string, unknown>)[method] === "function"
        )
          continue;
        problems.push(`${where}: ${name}(...) in ${JSON.stringify(text)}`);
      }
      if (/defineMigration/.test(text) && !exported.has("defineMigration"))
        problems.push(`${where}: defineMigration is not exported`);
    }
    expect(problems).toEqual([]);
  });

  it("every statebag command and flag in a fix text exists", () => {
    const gen = commands.get("gen")!;
    const problems: string[] = [];
    for (const { where, text } of texts) {
      // `npx statebag <command>`, or `statebag <command> --flag` (prose such as "upgrade statebag here" is neither).
      for (const m of text.matchAll(
        /(?:\bnpx statebag ([a-z-]+)|\bstatebag ([a-z-]+)(?= --))((?: --?[a-z-]+(?: [^-\s][^\s)]*)?)*)/g,
      )) {
        m[1] ??= m[2];
        m[2] = m[3];
        const flags = commands.get(m[1]!);
        if (!flags) problems.push(`${where}: no command "statebag ${m[1]}" in ${JSON.stringify(text)}`);
        for (const f of m[2]!.matchAll(/--[a-z-]+/g))
          if (flags && !flags.has(f[0]))
            problems.push(`${where}: statebag ${m[1]} has no ${f[0]} in ${JSON.stringify(text)}`);
      }
      for (const m of text.matchAll(/\bnpm run gen(?: --)?((?: --[a-z-]+)*)/g)) {
        for (const f of m[1]!.matchAll(/--[a-z-]+/g))
          if (!gen.has(f[0])) problems.push(`${where}: gen has no ${f[0]} in ${JSON.stringify(text)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("the runtime's texts name the command a user runs (npx statebag gen), not this repository's npm script", () => {
    const runtime = texts.filter((t) => t.where.startsWith("src/") && /\bnpm run gen\b/.test(t.text));
    expect(runtime.map((t) => t.where)).toEqual([]);
  });
});
