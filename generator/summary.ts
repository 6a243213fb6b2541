/** What a run reports per tagged type: part of `GenerateResult` and stored in the no-op cache. */
import type { FamilySlot } from "./slots.js";

export interface TypeSummary {
  $type: string;
  family: string;
  version: number;
  name: string;
  source: string;
  slots: FamilySlot[];
  /** Earlier `$type`s (sources of rename migrations ending at this type). */
  formerNames?: string[];
}
