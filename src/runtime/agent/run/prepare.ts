/** Prepare step: what the model is asked with (history, what context providers add, chat options). */
import type { ChatOptions } from "../chat-client.js";
import type { ChatMessage } from "../../core/messages.js";
import { forModel } from "../approvals.js";
import type { AIContext } from "../providers/context-provider.js";
import type { AITool } from "../tools.js";
import type { ClosedRound } from "./approval-round.js";
import { providerContext, type RunScope } from "./scope.js";

export interface PreparedRequest {
  /** What comes before the input: stored history, then messages context providers added. */
  context: ChatMessage[];
  /** The agent's tools and those context providers added. */
  tools: AITool[];
  options: ChatOptions;
}

export async function prepareRequest(scope: RunScope, runInstructions: string | undefined): Promise<PreparedRequest> {
  const { agent, session, declaredKind } = scope;
  // Hosted sessions' history lives at the service; the history provider is not consulted.
  const history = declaredKind === "hosted" ? [] : await agent.history.getMessages(providerContext(scope, agent.history.key));

  const contexts: AIContext[] = [];
  for (const provider of agent.contextProviders) {
    const added = await provider.invoking(providerContext(scope, provider.key));
    if (added) contexts.push(added);
  }
  const instructions = [agent.instructions, runInstructions, ...contexts.map((c) => c.instructions)].filter(Boolean).join("\n\n");
  const tools = [...agent.tools, ...contexts.flatMap((c) => c.tools ?? [])];

  const options: ChatOptions = { signal: scope.signal, sessionId: session.id };
  if (instructions) options.instructions = instructions;
  if (tools.length) options.tools = tools;
  if (declaredKind === "hosted") {
    options.store = true;
    if (session.conversationId !== undefined) options.conversationId = session.conversationId;
  } else if (declaredKind === "local" || !agent.client.metadata.supportsServiceStorage) {
    options.store = false;
  }
  return { context: [...history, ...contexts.flatMap((c) => c.messages ?? [])], tools, options };
}

/**
 * The first model request: context, the round closed in this run (answers, results), then the input.
 * Hosted: the service holds the calls already, so it gets the results and the new input only.
 */
export function firstRequest(prepared: PreparedRequest, closed: ClosedRound | undefined, input: readonly ChatMessage[]): ChatMessage[] {
  return forModel([...prepared.context, ...(closed?.messages ?? []), ...input]);
}
