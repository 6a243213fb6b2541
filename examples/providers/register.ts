/**
 * Makes sure the registry knows the example provider's state type.
 *
 * The intended path is codegen: `npm run gen` scans examples/ and puts `example.UserProfileState`
 * (schema + precompiled validator) into the generated registry, like every built-in type. Until
 * the generator's sources include examples/, the type is registered here at runtime with TypeBox,
 * the no-codegen path statebag also supports. Either way, stores then validate it on every save
 * and load.
 */
import { Type } from "@sinclair/typebox";
import { defaultRegistry } from "statebag";

export const USER_PROFILE_TYPE = "example.UserProfileState";

let source: "generated" | "runtime" | undefined;

/** How the type got into the registry: "generated" (codegen) or "runtime" (registered here). */
export function ensureExampleTypes(): "generated" | "runtime" {
  if (source) return source;
  const registry = defaultRegistry();
  if (registry.has(USER_PROFILE_TYPE)) return (source = "generated");
  registry.register({
    $type: USER_PROFILE_TYPE,
    version: 1,
    name: "UserProfileState",
    schema: Type.Object({
      name: Type.Optional(Type.String()),
      unit: Type.Optional(Type.Union([Type.Literal("celsius"), Type.Literal("fahrenheit")])),
      notes: Type.Array(Type.String()),
      updatedAt: Type.Optional(Type.String({ format: "date-time" })),
    }),
  });
  return (source = "runtime");
}

/**
 * For the CLI: `npx statebag inspect <id> --registry examples/providers/register.ts` reads the
 * demo's sessions with the example type known (needed only while it is registered at runtime).
 */
ensureExampleTypes();
export const registry = defaultRegistry();
