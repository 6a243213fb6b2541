/**
 * The markers that make a TypeScript type part of statebag's polymorphic registry.
 *
 * A tagged type carries a `"$type"` discriminator (unique across the whole registry) and an
 * integer `"$version"`. `npm run gen` finds declarations that extend one of these markers
 * (a syntax-only scan, so the marker must be written literally in the `extends` clause):
 *
 * ```ts
 * export interface SummaryState extends ProviderState<"acme.SummaryState", 2> { summary: string }
 * export interface CardContent extends Tagged<"AIContent", "acme.card", 1>, AIContentBase { title: string }
 * ```
 *
 * Version 1 may omit `$version` on the wire (absent means 1), which keeps version-1 message
 * contents byte-compatible with Microsoft.Extensions.AI / Agent Framework documents. From version 2
 * on, the compiler requires `$version` wherever a value is built, so a bump shows every
 * construction site that must change.
 */

/** Any JSON value. State values must be made only of these. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A `$type`/`$version` pair: version 1 may be omitted, later versions are required. */
export type Versioned<T extends string, V extends number> = V extends 1
  ? { $type: T; $version?: 1 }
  : { $type: T; $version: V };

/**
 * Marks a member of the polymorphic family `F` (for example `"AIContent"`) with the
 * registry-unique tag `T` at version `V`. The family is open: any project may add members.
 */
// biome-ignore lint/correctness/noUnusedVariables: F is read by the generator from the source text; the type checker does not need it
export type Tagged<F extends string, T extends string, V extends number> = Versioned<T, V>;

/** The family every provider's session state belongs to. */
export type ProviderStateFamily = "ProviderState";

/** Marks a provider state type: the value a provider keeps under its key in a session's state bag. */
export type ProviderState<T extends string, V extends number> = Tagged<ProviderStateFamily, T, V>;

/** What the runtime knows of any tagged value before it looks at its type. */
export interface TaggedValue {
  $type: string;
  $version?: number;
  [key: string]: unknown;
}

/**
 * What a `$type` id may look like: portable, because ids end up in file names and generated
 * identifiers. The generator and the runtime registry both check it.
 */
export const TYPE_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** True for a plain object carrying a string `$type`, wherever the key sits among its keys. */
export function isTaggedValue(value: unknown): value is TaggedValue {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { $type?: unknown }).$type === "string"
  );
}

/** The version a tagged value declares: absent means 1. */
export function versionOf(value: TaggedValue): number {
  return value.$version ?? 1;
}
