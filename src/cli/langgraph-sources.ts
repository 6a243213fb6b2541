/**
 * The `import --from` values that read LangGraph's own saver tables. Kept apart from
 * langgraph-import.ts so registering the command loads no import code.
 */
export const LANGGRAPH_SOURCES = ["langgraph-sqlite", "langgraph-postgres"] as const;
export type LangGraphSource = (typeof LANGGRAPH_SOURCES)[number];

export function isLangGraphSource(value: unknown): value is LangGraphSource {
  return (LANGGRAPH_SOURCES as readonly unknown[]).includes(value);
}
