/**
 * The AI SDK UI message stream protocol (v1), as `useChat`'s default transport reads it: server-sent
 * events whose `data:` is one `UIMessageChunk` as JSON, ended by `data: [DONE]`, on a response with
 * the header `x-vercel-ai-ui-message-stream: v1`. `UIMessageStreamEncoder` is the `TurnSink` that
 * turns a run's updates into those chunks: one step per model call, text and reasoning blocks,
 * tool input, output and approval requests.
 */
import type { AgentResponseUpdate } from "../agent/response.js";
import { isErrorResult } from "../ui-messages/keys.js";
import type { ApprovalAnswerInput, TurnSink } from "./chat-data.js";

/** The chunk shapes this encoder writes (a subset of the AI SDK's `UIMessageChunk`). */
export type UIStreamChunk =
  | { type: "start"; messageId?: string }
  | { type: "start-step" }
  | { type: "finish-step" }
  | { type: "finish"; finishReason?: "stop" | "tool-calls" | "error" | "other"; messageMetadata?: unknown }
  | { type: "error"; errorText: string }
  | { type: "text-start" | "text-end" | "reasoning-start" | "reasoning-end"; id: string }
  | { type: "text-delta" | "reasoning-delta"; id: string; delta: string }
  | { type: "tool-input-start"; toolCallId: string; toolName: string }
  | { type: "tool-input-delta"; toolCallId: string; inputTextDelta: string }
  | { type: "tool-input-available"; toolCallId: string; toolName: string; input: unknown }
  | { type: "tool-approval-request"; approvalId: string; toolCallId: string }
  | { type: "tool-output-available"; toolCallId: string; output: unknown }
  | { type: "tool-output-error"; toolCallId: string; errorText: string }
  | { type: "tool-output-denied"; toolCallId: string };

export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
});

const encoder = new TextEncoder();

/** One SSE event for a chunk. */
export function sseEvent(chunk: UIStreamChunk): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);
}

export const SSE_DONE = encoder.encode("data: [DONE]\n\n");

/** One SSE event for a chunk already written as JSON text (from a stream buffer). */
export function sseData(json: string): Uint8Array {
  return encoder.encode(sseText(json));
}

/** The SSE event of a chunk written as JSON text, as text (events are joined, then encoded once). */
export function sseText(json: string): string {
  return `data: ${json}\n\n`;
}

/** SSE events' text as the bytes a response sends. */
export function sseBytes(text: string): Uint8Array {
  return encoder.encode(text);
}

export class UIMessageStreamEncoder implements TurnSink {
  private started = false;
  private stepOpen = false;
  private block: { kind: "text" | "reasoning"; id: string } | undefined;
  private blocks = 0;
  private lastAssistantId: string | undefined;
  private afterTools = false;
  private readonly announced = new Set<string>();
  private readonly denied = new Set<string>();
  private waitingForApproval = false;

  /**
   * `newMessage`: the stream is a new message (a user's turn), not the continuation of the message
   * on screen: results of calls it did not announce (a round answered earlier, closed by this run)
   * belong to an earlier message and are left out (`useChat` has no part for them here; the stored
   * history shows them where they belong). `blockIdPrefix`: put in every text and reasoning block id
   * (`ai` copies a reasoning block's id into its part): a continuation streams into the message of an
   * earlier stream, so each stream of a message needs ids of its own (the turn's stream id).
   */
  constructor(
    private readonly write: (chunk: UIStreamChunk) => void,
    private readonly options: { newMessage?: boolean; blockIdPrefix?: string } = {},
  ) {}

  /**
   * Opens the message; called before the first update, or at the end of an empty run. `messageId`:
   * the id the server gives the answer (so the message on screen and the stored one are the same).
   */
  begin(messageId?: string): void {
    if (this.started) return;
    this.started = true;
    this.write(messageId === undefined ? { type: "start" } : { type: "start", messageId });
  }

  private step(): void {
    this.begin();
    if (!this.stepOpen) {
      this.write({ type: "start-step" });
      this.stepOpen = true;
    }
  }

  private closeBlock(): void {
    if (this.block) this.write({ type: this.block.kind === "text" ? "text-end" : "reasoning-end", id: this.block.id });
    this.block = undefined;
  }

  private closeStep(): void {
    this.closeBlock();
    if (this.stepOpen) this.write({ type: "finish-step" });
    this.stepOpen = false;
  }

  private delta(kind: "text" | "reasoning", text: string): void {
    if (text === "") return;
    if (this.block?.kind !== kind) {
      this.closeBlock();
      const prefix = this.options.blockIdPrefix === undefined ? "" : `${this.options.blockIdPrefix}-`;
      this.block = { kind, id: `${kind === "text" ? "txt" : "rsn"}-${prefix}${++this.blocks}` };
      this.write({ type: kind === "text" ? "text-start" : "reasoning-start", id: this.block.id });
    }
    this.write({ type: kind === "text" ? "text-delta" : "reasoning-delta", id: this.block.id, delta: text });
  }

  private announce(callId: string, name: string, input: unknown): void {
    if (this.announced.has(callId)) return;
    this.announced.add(callId);
    this.closeBlock();
    this.write({ type: "tool-input-start", toolCallId: callId, toolName: name });
    this.write({ type: "tool-input-available", toolCallId: callId, toolName: name, input: input ?? {} });
  }

  update(update: AgentResponseUpdate): void {
    if (this.options.newMessage) {
      const contents = update.contents.filter((c) => c.$type !== "functionResult" || this.announced.has(c.callId));
      if (contents.length === 0) return;
      if (contents.length !== update.contents.length) update = { ...update, contents };
    }
    if (update.role === "assistant") {
      // A new model call (another message id, or the first answer after tool results) is a new step.
      const newCall =
        this.afterTools ||
        (update.messageId !== undefined &&
          this.lastAssistantId !== undefined &&
          update.messageId !== this.lastAssistantId);
      if (newCall) this.closeStep();
      this.afterTools = false;
      if (update.messageId !== undefined) this.lastAssistantId = update.messageId;
    }
    // Results of calls answered before this stream (an approval's continuation) complete parts the
    // message has: they open no step (the AI SDK writes them before the next step's start-step).
    const onlyResults = update.contents.length > 0 && update.contents.every((c) => c.$type === "functionResult");
    if (onlyResults && !this.stepOpen) this.begin();
    else this.step();
    for (const content of update.contents) {
      switch (content.$type) {
        case "text":
          this.delta("text", content.text);
          break;
        case "reasoning":
          this.delta("reasoning", content.text ?? "");
          break;
        case "functionCall":
          if (content.informationalOnly) break;
          this.announce(content.callId, content.name, content.arguments);
          break;
        case "toolApprovalRequest": {
          const call = content.toolCall;
          if (call.$type !== "functionCall") break;
          this.announce(call.callId, call.name, call.arguments);
          this.write({ type: "tool-approval-request", approvalId: content.requestId, toolCallId: call.callId });
          this.waitingForApproval = true;
          break;
        }
        case "functionResult":
          this.afterTools = true;
          if (this.denied.has(content.callId)) break;
          this.closeBlock();
          // A tool's error result is an output-error part, as the stored history shows it.
          this.write(
            isErrorResult(content.result)
              ? { type: "tool-output-error", toolCallId: content.callId, errorText: content.result.error }
              : { type: "tool-output-available", toolCallId: content.callId, output: content.result ?? null },
          );
          break;
        default:
          break; // usage and other contents have no part in the UI message
      }
    }
  }

  approvalAnswered(answer: ApprovalAnswerInput & { callId: string }): void {
    this.begin(); // the answer completes the part of the step that asked; the next model call is a new step
    if (!answer.approved) {
      this.denied.add(answer.callId);
      this.write({ type: "tool-output-denied", toolCallId: answer.callId });
    }
    this.afterTools = true;
  }

  /** Ends the message after a committed turn; `messageMetadata` becomes the UI message's metadata. */
  finish(messageMetadata?: unknown): void {
    this.begin();
    this.closeStep();
    const finishReason = this.waitingForApproval ? "tool-calls" : "stop";
    this.write(
      messageMetadata === undefined
        ? { type: "finish", finishReason }
        : { type: "finish", finishReason, messageMetadata },
    );
  }

  /** Ends the message with an error the user may read (no input echoed, no internals). */
  fail(errorText: string): void {
    this.begin();
    this.closeStep();
    this.write({ type: "error", errorText });
  }
}
