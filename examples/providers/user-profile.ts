/**
 * An example custom provider: remembers who the user is and what they prefer, per session.
 *
 * This is all it takes to add state to statebag sessions:
 *   1. declare the state type with the `ProviderState<"<unique $type>", <version>>` marker;
 *   2. run `npm run gen` (it scans examples/ too), which adds its JSON Schema and validator to the
 *      generated registry, so stored sessions holding it are validated like built-in state;
 *   3. read and write it through `ProviderSessionState`, constructed with the type's descriptor
 *      (so the version it reads and writes comes from the type): the provider itself stays
 *      stateless and one instance serves every session.
 */
import { messageText, ProviderSessionState, type ProviderState, type StateDescriptor } from "statebag";
import { AIContextProvider, type AIContext, type InvokedContext, type ProviderContext } from "statebag/agent";

/** What the profile provider keeps in a session's state bag. */
export interface UserProfileState extends ProviderState<"example.UserProfileState", 1> {
  /** The name the user gave ("my name is ..."), once known. */
  name?: string;
  /** Preferred temperature unit, once the user said so. */
  unit?: "celsius" | "fahrenheit";
  /** Everything the user asked us to remember ("remember that ..."), oldest first. */
  notes: string[];
  /**
   * When the profile last changed (ISO-8601 with offset).
   * @format date-time
   */
  updatedAt?: string;
}

/**
 * The type's descriptor: its `$type` and version, typed from `UserProfileState`, so it cannot fall
 * behind the type. `statebag gen` writes these into src/generated/descriptors.ts for the types it
 * scans; this example is registered at runtime (register.ts), so it declares its own.
 */
export const UserProfileStateType: StateDescriptor<UserProfileState> = {
  $type: "example.UserProfileState",
  version: 1,
};

export interface UserProfileOptions {
  /** State bag key. Default `"example.userProfile"`. */
  key?: string;
  /** Clock, for deterministic demos and tests. */
  now?: () => Date;
}

/**
 * Learns the user's name, unit preference and notes from what they say, and tells the model about
 * them before every call.
 */
export class UserProfileProvider extends AIContextProvider {
  static readonly defaultKey = "example.userProfile";
  readonly key: string;
  readonly state: ProviderSessionState<UserProfileState>;
  private readonly now: () => Date;

  constructor(options: UserProfileOptions = {}) {
    super();
    this.key = options.key ?? UserProfileProvider.defaultKey;
    this.now = options.now ?? (() => new Date());
    this.state = new ProviderSessionState(this.key, UserProfileStateType, {
      initial: () => ({ $type: "example.UserProfileState", notes: [] }),
    });
  }

  override invoking(context: ProviderContext): AIContext | undefined {
    const profile = this.state.read(context.state);
    if (!profile) return undefined;
    const facts: string[] = [];
    if (profile.name) facts.push(`name: ${profile.name}`);
    if (profile.unit) facts.push(`preferred unit: ${profile.unit}`);
    for (const note of profile.notes) facts.push(`note: ${note}`);
    return facts.length ? { instructions: `User profile (${facts.join("; ")}).` } : undefined;
  }

  override invoked(context: InvokedContext): void {
    const current = this.state.readOrInit(context.state);
    const next: UserProfileState = { ...current, notes: [...current.notes] };
    let changed = false;
    for (const message of context.requestMessages) {
      if (message.role !== "user") continue;
      const text = messageText(message);
      const name = /\bmy name is (\w[\w-]*)/i.exec(text);
      if (name && name[1] !== next.name) (next.name = name[1]), (changed = true);
      const unit = /\b(celsius|fahrenheit)\b/i.exec(text);
      if (unit && /\bprefer\b/i.test(text))
        (next.unit = unit[1].toLowerCase() as UserProfileState["unit"]), (changed = true);
      const note = /\bremember that (.+?)[.!]?$/i.exec(text);
      if (note) next.notes.push(note[1]), (changed = true);
    }
    if (!changed) return;
    next.updatedAt = this.now().toISOString();
    // A new value, never a mutation: the agent commits it only if the whole run succeeds.
    this.state.write(context.state, next);
  }
}

/** Reads the preferred unit out of the instructions this provider contributed. */
export function unitFromInstructions(instructions: string): "celsius" | "fahrenheit" | undefined {
  const m = /preferred unit: (celsius|fahrenheit)/.exec(instructions);
  return m ? (m[1] as "celsius" | "fahrenheit") : undefined;
}
