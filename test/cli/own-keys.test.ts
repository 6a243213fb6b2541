/**
 * Issue #34.1 in the CLI: a name from the command line is looked up among own keys only. A size
 * unit of "constructor" found Object.prototype.constructor, and `--max-bytes 1constructor` became
 * NaN (a confusing "size is out of range" from the file read) instead of a usage error.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseMaxBytes } from "../../src/cli/read-document.js";
import { cli, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("--max-bytes units are own keys", () => {
  it("refuses an inherited property name as a unit", () => {
    for (const value of ["1constructor", "1CONSTRUCTOR", "2tostring", "3valueof", "4hasownproperty"])
      expect(() => parseMaxBytes(value), value).toThrow(/expected a size/);
    expect(parseMaxBytes("2KiB")).toBe(2048);
  });

  it("is a usage error naming the option, exit 2", async () => {
    const file = join(tmp.dir, "doc.json");
    writeFileSync(file, "{}");
    const run = await cli(["validate", "--max-bytes", "1constructor", file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--max-bytes");
    expect(run.stderr).toContain("expected a size");
    expect(run.stderr).not.toContain("NaN");
  });
});
