/**
 * The OpenAI Agents SDK's types as statebag needs them, written structurally so `statebag/openai-agents`
 * type-checks (and its .d.ts compiles with `skipLibCheck: false`) in a project without
 * `@openai/agents-core`. A `StatebagSession` is assignable to the SDK's `Session` because the
 * shapes match; the tests check that against the installed SDK.
 */

/**
 * One item of an Agents SDK conversation (`AgentInputItem`): a message, a function call or its
 * result, a reasoning item, a hosted tool call... Kept as an open JSON object: statebag maps the
 * kinds it has fields for and keeps every other item exactly as given.
 */
export interface AgentItem {
  type?: string;
  role?: string;
  // biome-ignore lint/suspicious/noExplicitAny: the SDK's item union is assignable here only through `any` members
  [key: string]: any;
}

/** The SDK's `Session` interface (@openai/agents-core `memory/session.d.ts`), structurally. */
export interface AgentsSession<Item = AgentItem> {
  getSessionId(): Promise<string>;
  getItems(limit?: number): Promise<Item[]>;
  addItems(items: Item[]): Promise<void>;
  popItem(): Promise<Item | undefined>;
  clearSession(): Promise<void>;
}

/** What statebag needs of an SDK `RunState`: its string form (`RunState.toString()`). */
export interface SerializableRunState {
  toString(): string;
}
