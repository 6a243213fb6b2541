/**
 * An example context provider (memory of a session beyond its history): keeps the last few messages of a session and
 * a model-written summary of them, and gives the summary to the model as instructions. Its state is
 * per session, in the bag; the provider itself holds only configuration and a client.
 */
import type { ChatClient } from "../chat-client.js";
import { messageText, userMessage } from "../../core/messages.js";
import { ProviderSessionState } from "../../core/state-bag.js";
import { RollingSummaryStateType } from "../../../generated/descriptors.js";
import type { RollingSummaryState } from "../../builtins/rolling-summary-state.js";
import { AIContextProvider, type AIContext, type InvokedContext } from "./context-provider.js";
import type { ProviderContext } from "./provider.js";

export { rollingSummaryMigrations } from "../../builtins/rolling-summary-state.js";
export type { RollingSummaryState } from "../../builtins/rolling-summary-state.js";

export interface RollingSummaryOptions {
  /** The client that writes summaries (often a small, cheap model). */
  summarizer: ChatClient;
  key?: string;
  /** How many recent messages to keep. Default 10. */
  maxMessages?: number;
  /** Summarize every N turns. Default 1. */
  summarizeEvery?: number;
}

export class RollingSummaryProvider extends AIContextProvider {
  static readonly defaultKey = "statebag.rollingSummary";
  readonly key: string;
  readonly state: ProviderSessionState<RollingSummaryState>;
  private readonly summarizer: ChatClient;
  private readonly maxMessages: number;
  private readonly summarizeEvery: number;

  constructor(options: RollingSummaryOptions) {
    super();
    this.key = options.key ?? RollingSummaryProvider.defaultKey;
    this.summarizer = options.summarizer;
    this.maxMessages = options.maxMessages ?? 10;
    this.summarizeEvery = options.summarizeEvery ?? 1;
    this.state = new ProviderSessionState(this.key, RollingSummaryStateType, {
      initial: () => ({ $type: "RollingSummaryState", $version: 2, summary: "", recentMessages: [], turnCount: 0 }),
    });
  }

  override invoking(context: ProviderContext): AIContext | undefined {
    const state = this.state.read(context.state);
    if (!state?.summary) return undefined;
    return { instructions: `Summary of the conversation so far: ${state.summary}` };
  }

  override async invoked(context: InvokedContext): Promise<void> {
    const current = this.state.readOrInit(context.state);
    let recent = current.recentMessages;
    // A run on a new branch (regenerate, edit) continues from its branch point: what came after it
    // is another branch. A point older than the kept messages leaves only the summary.
    if (context.branchFrom !== undefined) {
      const at = context.branchFrom === null ? -1 : recent.findIndex((m) => m.messageId === context.branchFrom);
      recent = recent.slice(0, at + 1);
    }
    const recentMessages = [...recent, ...context.requestMessages, ...context.responseMessages].slice(
      -this.maxMessages,
    );
    const turnCount = current.turnCount + 1;
    let summary = current.summary;
    if (turnCount % this.summarizeEvery === 0) {
      const transcript = recentMessages.map((m) => `${m.role}: ${messageText(m)}`).join("\n");
      const prompt = userMessage(`Summarize the conversation below in at most three sentences.\n\n${transcript}`);
      const response = await this.summarizer.getResponse([prompt], { store: false, signal: context.signal });
      summary = response.messages.map(messageText).join(" ").trim() || summary;
    }
    this.state.write(context.state, { $type: "RollingSummaryState", $version: 2, summary, recentMessages, turnCount });
  }
}
