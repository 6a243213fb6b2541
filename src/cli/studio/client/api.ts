/** The page's calls to the studio's JSON API (same origin, under the token path, never cached). */

import { queryOf } from "./dom.js";

/** GETs (or, with `init`, sends) `api/<path>?<params>`; the server's `{ error }` becomes the thrown message. */
export async function api<T>(
  path: string,
  params?: Record<string, string | number | undefined | null> | null,
  init?: RequestInit,
): Promise<T> {
  const query = queryOf(params);
  const response = await fetch(`api/${path}${query ? `?${query}` : ""}`, {
    credentials: "same-origin",
    cache: "no-store",
    ...init,
  });
  let body: unknown = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = body !== null && typeof body === "object" ? (body as { error?: unknown }).error : undefined;
    throw new Error(typeof error === "string" && error ? error : `HTTP ${response.status}`);
  }
  return body as T;
}
