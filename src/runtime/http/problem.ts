/**
 * Every error the HTTP layer answers is a JSON problem (RFC 9457, `application/problem+json`):
 * `type`, `title`, `status`, `detail`. Never a stack trace, never the raw input echoed back, never
 * a secret: `detail` is written here, from what the handler knows, not copied from an exception.
 */

/** A problem the handler answers with; thrown inside the handler and turned into a response. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    /** A short slug; the problem's `type` is `urn:statebag:problem:<slug>`. */
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    /** Response headers the problem needs (`Allow` of a 405), carried as data, never parsed out of the text. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${status} ${title}: ${detail}`);
    this.name = "HttpProblem";
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
}

export function problemBody(problem: HttpProblem): ProblemBody {
  return {
    type: `urn:statebag:problem:${problem.slug}`,
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
  };
}

export function problemResponse(problem: HttpProblem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problemBody(problem)), {
    status: problem.status,
    headers: {
      ...problem.headers,
      ...headers,
      "content-type": "application/problem+json",
      "cache-control": "no-store",
    },
  });
}
