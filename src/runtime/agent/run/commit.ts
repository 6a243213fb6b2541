/**
 * Commit step: the only place a run changes its session. Everything before wrote to staged state;
 * a run that fails or is aborted before here leaves the session exactly as it was.
 */
import {
  messageText,
  type ChatMessage,
  type ToolApprovalRequestContent,
  type UsageDetails,
} from "../../core/messages.js";
import { randomUUID } from "node:crypto";
import type { AgentSession, SessionKind } from "../../core/session.js";
import type { AgentResponse } from "../response.js";
import type { ClosedRound } from "./approval-round.js";
import { cloneData } from "./copy.js";
import { providerContext, type RunScope } from "./scope.js";
import type { ToolRoundsOutcome } from "./tool-round.js";

/** Some requests answered, some not: keeps the answers and runs nothing until the round is complete. */
export async function commitAnswersOnly(
  scope: RunScope,
  waiting: ToolApprovalRequestContent[],
): Promise<AgentResponse> {
  await readyToCommit(scope);
  scope.staged.commitTo(scope.session.stateBag);
  return responseOf(scope.session, [], { pendingApprovals: structuredClone(waiting) });
}

/** Lets providers see the response, records history, then commits state, kind and conversation. */
export async function commitRun(
  scope: RunScope,
  closed: ClosedRound | undefined,
  outcome: ToolRoundsOutcome,
): Promise<AgentResponse> {
  const { agent, session } = scope;
  // Every message the run records gets an id (a branch names its parent by it), the same for the
  // context providers and the history: copies, so the caller's input and the response are untouched.
  const named = new Map<ChatMessage, ChatMessage>();
  const withId = (m: ChatMessage) => {
    let out = named.get(m);
    if (!out) named.set(m, (out = m.messageId === undefined ? { ...m, messageId: `msg-${randomUUID()}` } : m));
    return out;
  };
  const input = scope.input.map(withId);
  const recording: RunScope = { ...scope, input };
  const produced = (closed ? [closed.results, ...outcome.produced] : outcome.produced).map(withId);
  const kind: SessionKind = scope.declaredKind ?? (outcome.conversationId !== undefined ? "hosted" : "local");
  for (const provider of agent.contextProviders)
    await provider.invoked({ ...providerContext(recording, provider.key), responseMessages: produced });
  // A copy: the caller keeps its input and the response's messages; editing them later must not change stored history.
  // The closed round (answers, then results) precedes the input, as the model saw it.
  const recorded = [...(closed?.messages ?? []), ...scope.input, ...outcome.produced].map(withId);
  if (kind === "local")
    await agent.history.addMessages(providerContext(recording, agent.history.key), cloneData(recorded));
  await readyToCommit(scope);
  // Last step that may fail: a history kept outside the session is written only for a run that commits.
  if (kind === "local") await agent.history.committing(providerContext(scope, agent.history.key));

  scope.staged.commitTo(session.stateBag);
  session.kind = kind;
  if (kind === "hosted" && outcome.conversationId !== undefined) session.conversationId = outcome.conversationId;
  return responseOf(session, closed ? [closed.results, ...outcome.produced] : outcome.produced, outcome);
}

/**
 * Waits, when streaming, until the consumer has taken every update; then a consumer that stopped
 * (or an outer abort) fails the run here, before anything is committed.
 */
async function readyToCommit(scope: RunScope): Promise<void> {
  await scope.stream?.beforeCommit();
  scope.signal?.throwIfAborted();
}

function responseOf(
  session: AgentSession,
  messages: ChatMessage[],
  extra: { usage?: UsageDetails; pendingApprovals?: ToolApprovalRequestContent[] },
): AgentResponse {
  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
  const response: AgentResponse = {
    sessionId: session.id,
    messages,
    text: lastAssistant ? messageText(lastAssistant) : "",
  };
  if (session.conversationId !== undefined) response.conversationId = session.conversationId;
  if (extra.usage) response.usage = extra.usage;
  if (extra.pendingApprovals) response.pendingApprovals = extra.pendingApprovals;
  return response;
}
