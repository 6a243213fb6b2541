import type { UsageDetails } from "../../core/messages.js";

/** Sums two rounds' usage, named counts included (a count only one round reports is kept as is). */
export function addUsage(a: UsageDetails | undefined, b: UsageDetails): UsageDetails {
  if (!a) return { ...b };
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const out: UsageDetails = {};
  for (const key of [
    "inputTokenCount",
    "outputTokenCount",
    "totalTokenCount",
    "cachedInputTokenCount",
    "reasoningTokenCount",
  ] as const) {
    const value = sum(a[key], b[key]);
    if (value !== undefined) out[key] = value;
  }
  if (a.additionalCounts || b.additionalCounts) {
    const counts = new Map<string, number>();
    for (const source of [a.additionalCounts, b.additionalCounts])
      for (const [name, count] of Object.entries(source ?? {})) counts.set(name, (counts.get(name) ?? 0) + count);
    out.additionalCounts = Object.fromEntries(counts);
  }
  return out;
}
