/**
 * Turning a kept `RunState` string back into the SDK's `RunState`. The only place
 * `statebag/openai-agents` loads `@openai/agents-core`, and only when a kept run is resumed: a
 * missing package is `MissingDependencyError` naming the install command.
 */
import { importOptional, importPackage } from "../core/optional-dependency.js";

/** The agent a run was started with (an SDK `Agent`), structurally: `RunState.fromString` checks it. */
export interface RunStateAgent {
  name: string;
}

interface AgentsCoreModule {
  RunState: { fromString(agent: RunStateAgent, text: string): Promise<unknown> };
}

/** `RunState.fromString(agent, text)` from `@openai/agents-core`, loaded now. */
export async function loadRunStateWith<S>(agent: RunStateAgent, text: string): Promise<S> {
  const sdk = await importOptional("@openai/agents-core", "StatebagSession.loadRunState", () =>
    importPackage<AgentsCoreModule>("@openai/agents-core"),
  );
  return (await sdk.RunState.fromString(agent, text)) as S;
}
