/**
 * The error `statebag gen` and `statebag diff` throw when the generator toolchain (statebag-kit, or
 * a compiler it needs) is missing or of another version. It lives in the runtime's core, handed on
 * by the `statebag/internal/toolchain` entry, not in the CLI: the kit throws the same class (through that
 * entry), and the entry's declarations must stand alone in the runtime package, which ships neither
 * the generator nor the CLI's declarations (src/cli/toolchain.ts names the generator's modules).
 */
import { StatebagError } from "./errors.js";

/** The kit (or a compiler it needs) is not installed where statebag can load it. */
export class ToolchainMissingError extends StatebagError {
  constructor(
    readonly missing: readonly string[],
    readonly command: string,
    readonly installCommand: string,
    /** What was found instead (a compiler of another version), when something was. */
    readonly found?: string,
  ) {
    const what = `statebag ${command} needs ${missing.join(", ")}`;
    super(
      "toolchain-missing",
      found === undefined
        ? `${what}, which ${missing.length === 1 ? "is" : "are"} not installed`
        : `${what}, but found ${found}`,
      {
        hint: `install the generator toolchain as a dev dependency: ${installCommand}`,
      },
    );
  }
}
