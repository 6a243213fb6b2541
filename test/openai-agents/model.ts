/**
 * The stubbed model the Agents SDK tests run on: a `Model` (@openai/agents-core) that answers from
 * the history the runner sends it, offline and deterministic, and a support agent whose `refund`
 * tool needs approval.
 */
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Usage,
  tool,
} from "@openai/agents-core";
import { z } from "zod";

/** Reads the conversation the runner sends, and answers from it, as a model with no memory of its own would. */
export class HistoryModel implements Model {
  readonly requests: AgentInputItem[][] = [];
  private n = 0;

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const input =
      typeof request.input === "string" ? [{ role: "user", content: request.input } as AgentInputItem] : request.input;
    this.requests.push(structuredClone(input));
    const last = input.at(-1) as { type?: string; role?: string; content?: unknown; output?: unknown };
    const said = input
      .filter((i) => (i as { role?: string }).role === "user")
      .map((i) => textOf((i as { content: unknown }).content));
    if (last.type === "function_call_result") {
      return this.reply(`done: ${textOf(last.output)}`);
    }
    const latest = said.at(-1) ?? "";
    const refund = /refund order (\d+)/.exec(latest);
    if (refund) {
      return {
        usage: new Usage(),
        output: [
          {
            type: "function_call",
            id: `fc_${++this.n}`,
            callId: `call_${this.n}`,
            name: "refund",
            status: "completed",
            arguments: JSON.stringify({ order: Number(refund[1]) }),
          },
        ],
      };
    }
    if (latest.startsWith("what did I say")) return this.reply(`you said: ${said.slice(0, -1).join(" | ")}`);
    return this.reply(`noted (${said.length} user messages so far)`);
  }

  // biome-ignore lint/correctness/useYield: the runner here never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("HistoryModel does not stream");
  }

  private reply(text: string): ModelResponse {
    return {
      usage: new Usage(),
      output: [
        {
          type: "message",
          role: "assistant",
          id: `msg_${++this.n}`,
          status: "completed",
          content: [{ type: "output_text", text }],
        },
      ],
    };
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? "").join("");
  if (content && typeof content === "object" && "text" in content) return String((content as { text: unknown }).text);
  return JSON.stringify(content);
}

export const refunds: number[] = [];
export function buildAgent(model: Model) {
  const refund = tool({
    name: "refund",
    description: "Refund an order",
    parameters: z.object({ order: z.number() }),
    needsApproval: true,
    execute: async ({ order }) => {
      refunds.push(order);
      return `refunded order ${order}`;
    },
  });
  return new Agent({ name: "support", instructions: "Help the customer.", model, tools: [refund] });
}
