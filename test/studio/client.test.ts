/**
 * The studio's page script as code the toolchain sees: client/ type-checks with its own tsconfig
 * (DOM, no Node), the API's answers are assignable to the types the page reads them as (checked by
 * this file's compilation), the bundle is one classic script, and the source never sets markup
 * from data (no innerHTML, outerHTML, insertAdjacentHTML, document.write, eval).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { StudioApi } from "../../src/cli/studio/api.js";
import { studioScript } from "../../src/cli/studio/client-script.js";
import type {
  MigrateResult,
  MigrationPreview,
  SessionPage,
  SessionView,
  StudioInfo,
  TypeList,
  TypeView,
} from "../../src/cli/studio/wire.js";
import { typeCheckProject } from "../helpers/type-check.js";

const REPO = join(import.meta.dirname, "../..");
const CLIENT = join(REPO, "src/cli/studio/client");

describe("the studio's page script (src/cli/studio/client)", () => {
  it("type-checks with its own tsconfig (DOM library, no Node types)", () => {
    const { files, options, errors } = typeCheckProject(join(CLIENT, "tsconfig.json"));
    expect(options.lib).toContain("lib.dom.d.ts");
    expect(files).toContain("app.ts");
    expect(errors).toEqual([]);
  }, 60_000);

  it("reads the API's answers as the types the API returns", () => {
    // Compile-time: each call type-checks only if the API's answer is assignable to the page's type.
    const answers = {} as {
      info: ReturnType<StudioApi["info"]>;
      sessions: Awaited<ReturnType<StudioApi["sessions"]>>;
      session: Awaited<ReturnType<StudioApi["session"]>>;
      preview: Awaited<ReturnType<StudioApi["migrationPreview"]>>;
      migrate: Awaited<ReturnType<StudioApi["migrateOne"]>>;
      types: ReturnType<StudioApi["types"]>;
      type: Awaited<ReturnType<StudioApi["type"]>>;
    };
    const readAs = <Wire>(answer: Wire): Wire => answer;
    expect([
      readAs<StudioInfo>(answers.info),
      readAs<SessionPage>(answers.sessions),
      readAs<SessionView>(answers.session),
      readAs<MigrationPreview>(answers.preview),
      readAs<MigrateResult>(answers.migrate),
      readAs<TypeList>(answers.types),
      readAs<TypeView>(answers.type),
    ]).toHaveLength(7);
  });

  it("never sets markup from a string", () => {
    const files = readdirSync(CLIENT).filter((name) => name.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(3);
    for (const name of files) {
      // The code, without its comments (which say what it never does).
      const source = readFileSync(join(CLIENT, name), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      expect(source, name).not.toMatch(
        /\b(?:innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval)\b|new Function/,
      );
    }
  });

  it("is bundled into one classic script by the build's second step", async () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> };
    // dist/ is emptied first (a removed module must not ship), then tsc, then the page bundle.
    expect(pkg.scripts.build).toMatch(
      /^node -e "require\('node:fs'\)\.rmSync\('dist'.*&& tsc -p tsconfig\.build\.json && node scripts\/build-studio\.mjs$/,
    );
    expect(pkg.scripts.typecheck).toContain("tsc -p src/cli/studio/client/tsconfig.json");
    const script = await studioScript();
    expect(script).toMatch(/^"use strict";\n\(\(\) => \{/);
    expect(script).not.toMatch(/^\s*(?:import|export)\s/m);
    expect(() => new Function(script)).not.toThrow();
  });
});
