/** The error every model client throws for a service failure, whatever the SDK. */
import { StatebagError } from "../../core/errors.js";
import { shownText } from "../../core/json.js";

/** A service's message as an error message quotes it: escaped and cut (the service may be any server). */
export const serviceText = (message: string): string => shownText(message, 1000);

/** The model service answered with an error, or could not be reached. */
export class ModelServiceError extends StatebagError {
  constructor(
    message: string,
    readonly details: {
      provider: string;
      /** HTTP status; absent for connection failures and errors inside a stream. */
      status?: number;
      /** The service's own message. */
      serviceMessage: string;
      serviceCode?: string;
      requestId?: string;
      /** True for rate limits, server errors and connection failures: trying again later may work. */
      retryable: boolean;
    },
    cause?: unknown,
  ) {
    super("model-service", message, {
      cause,
      hint: details.retryable
        ? "a temporary failure: retry later (the session was left unchanged)"
        : details.status === 401 || details.status === 403
          ? "check the API key (OPENAI_API_KEY) and the project's access to this model"
          : details.status === 404
            ? "check the model name and baseURL, or that the conversation/response id still exists at the service"
            : "the request was refused; check the model, its options and the input",
    });
  }
  get status(): number | undefined {
    return this.details.status;
  }
}
