/**
 * Run middleware (seed 004, scenario 8): a function wrapping a run. Before `next()` it sees the
 * session as it was; after `next()` resolves, the run has committed and it sees the new state.
 * If `next()` rejects, the session is unchanged.
 */
import type { AgentResponse, ChatClientAgent } from "./agent.js";
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";

export interface RunContext {
  readonly agent: ChatClientAgent;
  /** The live session: read it freely; the run itself is what changes it. */
  readonly session: Readonly<AgentSession>;
  readonly input: readonly ChatMessage[];
  readonly streaming: boolean;
}

export type RunMiddleware = (context: RunContext, next: () => Promise<AgentResponse>) => Promise<AgentResponse>;

/** Runs `core` inside the middleware, first one outermost. */
export function runMiddleware(middleware: readonly RunMiddleware[], context: RunContext, core: () => Promise<AgentResponse>): Promise<AgentResponse> {
  const call = (index: number): Promise<AgentResponse> => {
    if (index === middleware.length) return core();
    let called = false;
    return middleware[index](context, () => {
      if (called) return Promise.reject(new Error("run middleware called next() twice"));
      called = true;
      return call(index + 1);
    });
  };
  return call(0);
}
