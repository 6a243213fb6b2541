/**
 * An Agents SDK history as a statebag session, with an account of what had no statebag field.
 *
 * Reads either form an app has at hand: an items array (what a `Session` holds, what
 * `result.history` gives) or a `RunState` string (`result.state.toString()`). From a RunState the
 * conversation is its original input followed by its generated items (each item's `rawItem`), the
 * same items the SDK persists to a session; a tool call waiting for approval is not yet part of the
 * conversation, so a RunState stopped for approval is kept whole, as `saveRunState` keeps it, and
 * `StatebagSession.loadRunState` resumes it. The result is the session a `StatebagSession` with
 * that id writes: items map as items.ts maps them. Nothing is dropped silently: every loss is listed.
 */
import { StatebagError } from "../core/errors.js";
import { describeValue } from "../core/json.js";
import { createSessionData, type AgentSession } from "../core/session.js";
import type { TaggedValue } from "../core/tagged.js";
import { isVerbatimItemMessage, itemToMessage, OPENAI_AGENTS_ITEM_TYPE } from "./items.js";
import {
  OPENAI_AGENTS_HISTORY_KEY,
  OPENAI_AGENTS_RUN_STATE_KEY,
  OPENAI_AGENTS_RUN_STATE_TYPE,
  type OpenAIAgentsRunStateValue,
} from "./session.js";
import type { AgentItem } from "./types.js";

/** One kind of loss: what had no statebag field, how often, and how it was kept (or that it was not). */
export interface OpenAIAgentsImportLoss {
  what: string;
  count: number;
  kept: string;
}

export interface OpenAIAgentsImport {
  session: AgentSession;
  /** Which form the input was. */
  source: "items" | "run-state";
  /** Conversation items imported. */
  items: number;
  /** Tool calls waiting for approval (a RunState stopped for approval). */
  pendingApprovals: number;
  losses: OpenAIAgentsImportLoss[];
}

/** The input is neither an items array nor a RunState. Nothing was imported. */
export class OpenAIAgentsImportError extends StatebagError {
  constructor(what: string) {
    super("interop-import", `not an OpenAI Agents SDK history: ${what}`, {
      hint: "give a JSON array of Agents SDK items (await session.getItems(), result.history) or a RunState string (result.state.toString())",
    });
  }
}

type Json = { [key: string]: unknown };
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** What a RunState holds besides the conversation, by field, for the loss report. */
const RUN_STATE_EXTRAS: Record<string, string> = {
  modelResponses: "model responses (usage, response ids, raw outputs)",
  context: "the run context (usage totals, approvals decided, the app's context object)",
  trace: "the trace",
  currentAgent: "the agent the run was at",
  lastProcessedResponse: "the last processed model response",
  toolUseTracker: "which tools each agent used",
};

/**
 * Converts parsed JSON (`value`) into a statebag session `id`. `value` is an items array, a
 * RunState object (its string form parsed), or a RunState string itself.
 */
export function importOpenAIAgentsHistory(
  value: unknown,
  options: { id: string; runStateText?: string },
): OpenAIAgentsImport {
  let parsed = value;
  let runStateText = options.runStateText;
  if (typeof parsed === "string") {
    runStateText = parsed;
    try {
      parsed = JSON.parse(parsed);
    } catch {
      throw new OpenAIAgentsImportError("a string that is not a RunState's JSON text");
    }
  }
  const losses: OpenAIAgentsImportLoss[] = [];
  let items: unknown[];
  let source: OpenAIAgentsImport["source"];
  let pendingApprovals = 0;
  let keepRunState = false;
  if (Array.isArray(parsed)) {
    source = "items";
    items = parsed;
  } else if (isObject(parsed) && typeof parsed.$schemaVersion === "string" && "originalInput" in parsed) {
    source = "run-state";
    const original = parsed.originalInput;
    items =
      typeof original === "string"
        ? [{ type: "message", role: "user", content: original }]
        : Array.isArray(original)
          ? [...original]
          : [];
    const generated = Array.isArray(parsed.generatedItems) ? parsed.generatedItems : [];
    for (const [index, entry] of generated.entries()) {
      if (!isObject(entry) || !isObject(entry.rawItem)) {
        throw new OpenAIAgentsImportError(`generatedItems/${index} has no rawItem (found ${describeValue(entry)})`);
      }
      if (entry.type === "tool_approval_item") pendingApprovals++;
      else items.push(entry.rawItem);
    }
    // What the SDK persists to a session is not the raw item: it drops the transient ids of tool
    // calls and results (0.20.0, runner/sessionItems: stripTransientCallIds). Do the same, so the
    // session holds what the run would have written to one.
    let stripped = 0;
    items = items.map((item) => {
      const out = stripTransientCallIds(item);
      if (out !== item) stripped++;
      return out;
    });
    if (stripped > 0) {
      losses.push({
        what: "ids of tool calls and results (transient: the Agents SDK drops them when it writes a session)",
        count: stripped,
        kept: "not kept, as the SDK's own session persistence does not keep them (the call ids that pair calls with results are kept)",
      });
    }
    const step = isObject(parsed.currentStep) ? parsed.currentStep.type : undefined;
    keepRunState = pendingApprovals > 0 || step === "next_step_interruption";
    const extras = Object.keys(RUN_STATE_EXTRAS).filter((k) => parsed && (parsed as Json)[k] != null);
    if (keepRunState) {
      losses.push({
        what: `a run waiting for approval (${pendingApprovals} tool call${pendingApprovals === 1 ? "" : "s"})`,
        count: 1,
        kept: `the whole RunState text, as saveRunState keeps it (${OPENAI_AGENTS_RUN_STATE_KEY}): resume with StatebagSession.loadRunState(agent)`,
      });
    } else if (extras.length > 0) {
      losses.push({
        what: `RunState fields outside the conversation: ${extras.map((k) => RUN_STATE_EXTRAS[k]).join("; ")}`,
        count: extras.length,
        kept: "not kept: a finished run's state is not part of its conversation (an Agents SDK Session does not keep it either)",
      });
    }
  } else {
    throw new OpenAIAgentsImportError(
      isObject(parsed) ? "an object without $schemaVersion and originalInput" : describeValue(parsed),
    );
  }

  const messages = items.map((item, i) => {
    if (!isObject(item)) throw new OpenAIAgentsImportError(`item ${i} is ${describeValue(item)}, not an item object`);
    return itemToMessage(item as AgentItem, i);
  });
  const verbatim = new Map<string, number>();
  for (const message of messages) {
    if (!isVerbatimItemMessage(message)) continue;
    const item = (message.contents[0] as unknown as { item: Json }).item;
    const kind = typeof item.type === "string" ? item.type : `${String(item.role ?? "untyped")} message`;
    verbatim.set(kind, (verbatim.get(kind) ?? 0) + 1);
  }
  for (const [kind, count] of verbatim) {
    losses.push({
      what: `${kind} items (no statebag content type holds them exactly)`,
      count,
      kept: `verbatim, as a "${OPENAI_AGENTS_ITEM_TYPE}" content: read back exactly by StatebagSession`,
    });
  }

  const session = createSessionData({ id: options.id });
  session.stateBag[OPENAI_AGENTS_HISTORY_KEY] = {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    branches: [],
    branchPoints: [],
    messages,
    droppedMessageCount: 0,
  } as TaggedValue;
  if (keepRunState) {
    const value: OpenAIAgentsRunStateValue = {
      $type: OPENAI_AGENTS_RUN_STATE_TYPE,
      state: runStateText ?? JSON.stringify(parsed),
      savedAt: new Date().toISOString(),
    };
    session.stateBag[OPENAI_AGENTS_RUN_STATE_KEY] = value as unknown as TaggedValue;
  }
  return { session, source, items: messages.length, pendingApprovals, losses };
}

/** A tool call or result item without its `id` (the SDK's rule), or the item itself when it keeps it. */
function stripTransientCallIds(item: unknown): unknown {
  if (!isObject(item) || (typeof item.id !== "string" && item.id === undefined)) return item;
  const type = item.type;
  const callId = item.call_id ?? item.callId;
  const providerData = isObject(item.providerData) ? item.providerData : {};
  const strip =
    type === "function_call" ||
    type === "function_call_result" ||
    ((type === "tool_search_call" || type === "tool_search_output") &&
      ((typeof callId === "string" && callId !== "") ||
        typeof (providerData.call_id ?? providerData.callId) === "string"));
  if (!strip) return item;
  const { id: _id, ...rest } = item;
  return rest;
}
