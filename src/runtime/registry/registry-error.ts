/** The registry's error: its own module so the registry's helpers can throw it without an import cycle. */
import { StatebagError } from "../core/errors.js";

/** A mistake in how types were registered or composed. */
export class RegistryError extends StatebagError {
  constructor(message: string, hint?: string, cause?: unknown) {
    super("registry", message, { hint, cause });
  }
}
