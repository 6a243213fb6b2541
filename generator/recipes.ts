/**
 * Fix texts shared by the generator's checks, so every message gives the same recipe (the one
 * generator/README.md documents).
 */

/**
 * The one way to rename a `$type` (generator/README.md, "Renaming a type"): the marker gets the new
 * `$type` at the next version, and one step next to it renames the values stored under the old
 * one. The version goes up so the old and new names never share a version (each keeps its own
 * `<Name>_v<N>` type). `last` is the old name's latest version; `family` picks the marker shown.
 */
export function renameRecipe(oldType: string, last: number, newType = "<new $type>", family = "ProviderState"): string {
  const next = last + 1;
  const marker =
    family === "ProviderState"
      ? `ProviderState<${JSON.stringify(newType)}, ${next}>`
      : `Tagged<${JSON.stringify(family)}, ${JSON.stringify(newType)}, ${next}>`;
  return (
    `change the type's marker to the new $type at the next version (${marker}) and add the rename step next to it: ` +
    `defineMigration({ type: ${JSON.stringify(oldType)}, from: ${last}, to: { type: ${JSON.stringify(newType)}, version: ${next} }, up: (v) => v }); ` +
    `keep the old name's migrations and fixtures as they are`
  );
}
