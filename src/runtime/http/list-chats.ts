/** `GET ${base}/chats`: the owner's chats, newest first, a page at a time (`?cursor=&limit=`). */
import { HttpProblem } from "./problem.js";
import { json, ownerOf, type Route } from "./request.js";

export const listChats: Route = async (context, request, url) => {
  const owner = await ownerOf(context, request);
  const limitText = url.searchParams.get("limit");
  const limit = limitText === null ? context.pageSize : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new HttpProblem("http-invalid-request", { detail: "limit must be an integer from 1 to 100." });
  const cursor = url.searchParams.get("cursor") ?? undefined;
  return json(200, await context.chats.list(owner, { cursor, limit }));
};
