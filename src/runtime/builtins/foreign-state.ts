/**
 * The envelopes for data from another session format that statebag does not model
 * (`statebag.ForeignState`, the `statebag.foreign` content), kept apart from the interop code so
 * the generated registry lists them without loading it. interop/foreign.ts wraps and unwraps them.
 */
import type { AIContentBase } from "../core/messages.js";
import type { JsonObject, JsonValue, ProviderState, Tagged } from "../core/tagged.js";

/** The session formats statebag reads and writes besides its own. */
export type InteropFormat = "dotnet" | "python";

/** A state bag value from another format that statebag does not model, kept byte-for-byte. */
export interface ForeignState extends ProviderState<"statebag.ForeignState", 1> {
  /** The format the value came from; it is unwrapped when writing that format again. */
  format: InteropFormat;
  /** The raw value exactly as the other format stored it. */
  value: JsonValue;
}

/** A message content from another format that statebag has no content type for, kept as it was. */
export interface ForeignContent extends Tagged<"AIContent", "statebag.foreign", 1>, AIContentBase {
  format: InteropFormat;
  /** The raw content exactly as the other format stored it. */
  value: JsonObject;
}
