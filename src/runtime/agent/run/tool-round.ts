/**
 * Tool rounds: the model is called, the tools it calls run, their results go back to it, until it
 * answers without calls, a call needs approval, or `maxToolRounds` is reached.
 */
import type {
  ChatMessage,
  FunctionCallContent,
  ToolApprovalRequestContent,
  UsageDetails,
} from "../../core/messages.js";
import type { ServiceSessionId } from "../../core/session.js";
import { runTool } from "../approvals.js";
import type { AITool } from "../tools.js";
import { planApprovals, stopForApprovals } from "./approval-round.js";
import { callModel } from "./model-call.js";
import type { PreparedRequest } from "./prepare.js";
import type { ModelRequest } from "./request.js";
import type { RunScope } from "./scope.js";
import { addUsage } from "./usage.js";

export interface ToolRoundsOutcome {
  /** What the model and the tools produced, in order. */
  produced: ChatMessage[];
  /** The service's conversation, when the session is (or turned out) hosted. */
  conversationId: ServiceSessionId | undefined;
  usage?: UsageDetails;
  /** Set when the run stopped for tool approvals. */
  pendingApprovals?: ToolApprovalRequestContent[];
}

export async function runToolRounds(
  scope: RunScope,
  prepared: PreparedRequest,
  request: ModelRequest,
  maxToolRounds: number,
): Promise<ToolRoundsOutcome> {
  const { tools, options } = prepared;
  const onUpdate = scope.stream?.onUpdate;
  const outcome: ToolRoundsOutcome = { produced: [], conversationId: scope.session.conversationId };
  for (let round = 0; ; round++) {
    const response = await callModel(scope.agent.client, request, options, onUpdate);
    if (response.usage) outcome.usage = addUsage(outcome.usage, response.usage);
    const hosted =
      scope.declaredKind === "hosted" || (scope.declaredKind === undefined && response.conversationId !== undefined);
    if (hosted && response.conversationId !== undefined) outcome.conversationId = response.conversationId;
    const calls = pendingCalls(response.messages, tools);
    const planned = await planApprovals(scope, calls, tools);
    if (planned.some((p) => p.request)) {
      const stopped = stopForApprovals(scope, response.messages, planned);
      for (const message of stopped.messages) outcome.produced.push(message);
      outcome.pendingApprovals = stopped.requests;
      return outcome;
    }
    for (const message of response.messages) outcome.produced.push(message);
    if (calls.length === 0) return outcome;
    const lastRound = round + 1 >= maxToolRounds;
    // The last round still answers every call: a call without a result would break the next model request.
    const results = lastRound ? notRun(calls, maxToolRounds) : await invokeTools(scope, calls, tools);
    outcome.produced.push(results);
    onUpdate?.({ role: results.role, contents: results.contents });
    if (lastRound) return outcome;
    if (hosted) {
      // The service already holds everything before the results.
      request.replace([results]);
      options.conversationId = outcome.conversationId;
      options.store = true;
    } else {
      request.extend([...response.messages, results]);
    }
  }
}

/** Function calls this agent can answer itself (a tool with `execute`); others go back to the caller. */
function pendingCalls(messages: readonly ChatMessage[], tools: readonly AITool[]): FunctionCallContent[] {
  const calls: FunctionCallContent[] = [];
  for (const message of messages) {
    for (const content of message.contents) {
      if (content.$type === "functionCall" && !content.informationalOnly) calls.push(content);
    }
  }
  const runnable = calls.filter((call) => tools.some((t) => t.name === call.name && t.execute));
  return runnable.length === calls.length ? calls : [];
}

async function invokeTools(
  scope: RunScope,
  calls: readonly FunctionCallContent[],
  tools: readonly AITool[],
): Promise<ChatMessage> {
  const contents = [];
  // A throwing tool gives the model an error result it can recover from; the run goes on.
  for (const call of calls)
    contents.push(
      await runTool(tools.find((t) => t.name === call.name)!, call, {
        sessionId: scope.session.id,
        callId: call.callId,
        signal: scope.signal,
      }),
    );
  return { role: "tool", contents };
}

function notRun(calls: readonly FunctionCallContent[], maxToolRounds: number): ChatMessage {
  return {
    role: "tool",
    contents: calls.map((call) => ({
      $type: "functionResult",
      callId: call.callId,
      result: { error: `not run: this run reached maxToolRounds (${maxToolRounds})` },
    })),
  };
}
