/**
 * The part of `@opentelemetry/api` statebag uses, as structural types (so an app without the package
 * type-checks: no public declaration names it), and its lazy loader. `@opentelemetry/api` is an
 * optional peer dependency, imported with the package name as a value (bundlers leave it alone,
 * Node resolves it at run time) the first time a store is opened; absent, tracing is off.
 */

/** An attribute value (OpenTelemetry's `AttributeValue`, as statebag sets them). */
export type OtelAttributeValue = string | number | boolean | string[];

export type OtelAttributes = Record<string, OtelAttributeValue | undefined>;

/** What statebag calls on a span (a subset of OpenTelemetry's `Span`). */
export interface OtelSpan {
  setAttribute(key: string, value: OtelAttributeValue): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/** A tracer (OpenTelemetry's `Tracer`: `trace.getTracer("app")` or `provider.getTracer(...)`). */
export interface OtelTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: OtelAttributes }, context?: unknown): OtelSpan;
}

/** A tracer provider (OpenTelemetry's `TracerProvider`, e.g. the SDK's `BasicTracerProvider`). */
export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer;
}

/** An OpenTelemetry `Context`. @internal */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
}

/** The module `@opentelemetry/api`, as far as statebag uses it. @internal */
export interface OtelApi {
  trace: {
    getTracerProvider(): OtelTracerProvider & {
      getDelegateTracer?(name: string, version?: string): OtelTracer | undefined;
    };
    getSpan(context: OtelContext): OtelSpan | undefined;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
  };
  context: {
    active(): OtelContext;
    with<T>(context: OtelContext, fn: () => T): T;
  };
}

/** How the package is found. Tests replace `load` to simulate an app without it. @internal */
export const otelResolution: { specifier: string; load: (specifier: string) => Promise<unknown> } = {
  specifier: "@opentelemetry/api",
  load: (specifier) => import(specifier),
};

let loading: Promise<OtelApi | undefined> | undefined;
let loaded: OtelApi | undefined;

/** `@opentelemetry/api`, loaded once; undefined when it is not installed (or cannot be loaded). */
export function loadOtel(): Promise<OtelApi | undefined> {
  loading ??= otelResolution.load(otelResolution.specifier).then(
    (mod) => {
      const named = mod as Partial<OtelApi> & { default?: Partial<OtelApi> };
      const api = named.trace === undefined ? named.default : named;
      const usable =
        typeof api?.trace?.getTracerProvider === "function" && typeof api.context?.with === "function"
          ? (api as OtelApi)
          : undefined;
      loaded = usable;
      return usable;
    },
    () => undefined,
  );
  return loading;
}

/** The package if `loadOtel` has loaded it, else undefined (without loading). @internal */
export function loadedOtel(): OtelApi | undefined {
  return loaded;
}

/** Forgets the loaded package (for tests that change `otelResolution`). @internal */
export function resetOtel(): void {
  loading = undefined;
  loaded = undefined;
}
