/** Prepare step: what the model is asked with (history, what context providers add, chat options). */
import type { ChatOptions } from "../chat-client.js";
import type { ChatMessage } from "../../core/messages.js";
import { appendForModel, firstHoldingApprovals, lendModelView, modelView } from "../approvals.js";
import type { AIContext } from "../providers/context-provider.js";
import type { AITool } from "../tools.js";
import type { ClosedRound } from "./approval-round.js";
import { ModelRequest } from "./request.js";
import { providerContext, type RunScope } from "./scope.js";

export interface PreparedRequest {
  /**
   * The stored history: the first `length` of `messages`, shared with the history provider (read
   * only), `rewritten` when it is already as the model sees it (approval contents rewritten, see
   * `forModel`; kept per append-only history, so a run on a long unchanged log does not go over it).
   * `source` is that append-only history (the key its kept model view may be lent by).
   */
  history: {
    readonly messages: readonly ChatMessage[];
    readonly length: number;
    readonly rewritten: boolean;
    readonly source?: readonly ChatMessage[];
  };
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
      ? { ...modelView(view.messages, view.length), rewritten: true, source: view.messages }
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
  if (scope.blobs) options.blobs = scope.blobs;
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
 * With `reusable` (the client keeps no reference to what it is sent), the kept model view of an
 * append-only history is lent rather than copied: the request is pushed after it, and
 * `ModelRequest.release` gives it back.
 */
export function firstRequest(
  prepared: PreparedRequest,
  closed: ClosedRound | undefined,
  input: readonly ChatMessage[],
  reusable: boolean,
): ModelRequest {
  const rest: ChatMessage[] = [];
  appendForModel(rest, prepared.context, 0, prepared.context.length);
  if (closed) appendForModel(rest, closed.messages, 0, closed.messages.length);
  appendForModel(rest, input, 0, input.length);
  const { history } = prepared;
  if (!history.rewritten) {
    // Up to the first message holding approval contents, the history is as the model sees it: copied
    // with one slice/concat (a memory copy), not pushed message by message. Most histories hold none.
    const first = firstHoldingApprovals(history.messages, history.length);
    if (first === history.length) {
      const all = history.length === history.messages.length ? history.messages : history.messages.slice(0, first);
      return new ModelRequest(all.concat(rest), reusable);
    }
    const out = history.messages.slice(0, first);
    appendForModel(out, history.messages, first, history.length);
    for (const message of rest) out.push(message);
    return new ModelRequest(out, reusable);
  }
  const loan = reusable && history.source ? lendModelView(history.source, history.length) : undefined;
  if (loan) {
    for (const message of rest) loan.messages.push(message);
    return new ModelRequest(loan.messages, true, loan);
  }
  // One array: the history as the model sees it, then the rest. The rest goes in with concat, not
  // push: pushing onto a long copy would grow (copy) it once more.
  const shown =
    history.length === history.messages.length ? history.messages : history.messages.slice(0, history.length);
  return new ModelRequest(shown.concat(rest), reusable);
}
