/** Prepare step: what the model is asked with (history, what context providers add, chat options). */
import type { ChatOptions } from "../chat-client.js";
import type { ChatMessage } from "../../core/messages.js";
import { appendForModel, modelView } from "../approvals.js";
import type { AIContext } from "../providers/context-provider.js";
import type { AITool } from "../tools.js";
import type { ClosedRound } from "./approval-round.js";
import { providerContext, type RunScope } from "./scope.js";

export interface PreparedRequest {
  /**
   * The stored history: the first `length` of `messages`, shared with the history provider (read
   * only), `rewritten` when it is already as the model sees it (approval contents rewritten, see
   * `forModel`; kept per append-only history, so a run on a long unchanged log does not go over it).
   */
  history: { readonly messages: readonly ChatMessage[]; readonly length: number; readonly rewritten: boolean };
  /** Messages context providers added: after the history, before the input. */
  context: ChatMessage[];
  /** The agent's tools and those context providers added. */
  tools: AITool[];
  options: ChatOptions;
}

export async function prepareRequest(scope: RunScope, runInstructions: string | undefined): Promise<PreparedRequest> {
  const { agent, session, declaredKind } = scope;
  // Hosted sessions' history lives at the service; the history provider is not consulted.
  const view =
    declaredKind === "hosted" ? undefined : await agent.history.historyView(providerContext(scope, agent.history.key));
  const history = !view
    ? { messages: [], length: 0, rewritten: true }
    : view.appendOnly
      ? { ...modelView(view.messages, view.length), rewritten: true }
      : { messages: view.messages, length: view.length, rewritten: false };

  const contexts: AIContext[] = [];
  for (const provider of agent.contextProviders) {
    const added = await provider.invoking(providerContext(scope, provider.key));
    if (added) contexts.push(added);
  }
  const instructions = [agent.instructions, runInstructions, ...contexts.map((c) => c.instructions)]
    .filter(Boolean)
    .join("\n\n");
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
  return { history, context: contexts.flatMap((c) => c.messages ?? []), tools, options };
}

/**
 * The first model request: context, the round closed in this run (answers, results), then the input.
 * Hosted: the service holds the calls already, so it gets the results and the new input only.
 */
export function firstRequest(
  prepared: PreparedRequest,
  closed: ClosedRound | undefined,
  input: readonly ChatMessage[],
): ChatMessage[] {
  // One array: the history as the model sees it, then the rest rewritten the same way. The rest
  // goes in with concat, not push: pushing onto a long copy would grow (copy) it once more.
  const rest: ChatMessage[] = [];
  appendForModel(rest, prepared.context, 0, prepared.context.length);
  if (closed) appendForModel(rest, closed.messages, 0, closed.messages.length);
  appendForModel(rest, input, 0, input.length);
  const { history } = prepared;
  let out: ChatMessage[];
  if (!history.rewritten) {
    out = [];
    appendForModel(out, history.messages, 0, history.length);
    for (const m of rest) out.push(m);
  } else {
    out = (
      history.length === history.messages.length ? history.messages : history.messages.slice(0, history.length)
    ).concat(rest);
  }
  return out;
}
