/**
 * The state `RollingSummaryProvider` keeps in a session and its stored versions' migrations, kept
 * apart from the provider class so the generated registry loads them without loading the agent.
 */
import type { ChatMessage } from "../core/messages.js";
import type { ProviderState } from "../core/tagged.js";
import { defineMigration } from "../registry/migrations.js";

export interface RollingSummaryState extends ProviderState<"RollingSummaryState", 2> {
  /** The model's latest summary of the conversation, empty until the first summary. */
  summary: string;
  /** The most recent messages (at most `maxMessages`), what the next summary is written from. */
  recentMessages: ChatMessage[];
  /**
   * Turns seen since the session started (version 1 called it `turns`).
   * @TJS-type integer
   * @minimum 0
   */
  turnCount: number;
}

/** Version 1 as stored (schemas/history/; this room stands below src/generated/, so it is written out here). */
interface RollingSummaryStateV1 {
  $type: "RollingSummaryState";
  $version?: 1;
  summary: string;
  recentMessages: ChatMessage[];
  turns: number;
}

/** Version 2 renamed `turns` to `turnCount` (a count, named like one); nothing else changed. */
export const rollingSummaryMigrations = [
  defineMigration<RollingSummaryStateV1, RollingSummaryState>({
    type: "RollingSummaryState",
    from: 1,
    to: 2,
    up: ({ turns, ...rest }) => ({ ...rest, turnCount: turns }),
  }),
];
