// A client of the engine memory server (engine serve) over global fetch
// (TCP) or node:http (the data dir's unix socket), typed by the types
// generated from the server's OpenAPI document (src/schema.d.ts).

import { request as httpRequest } from "node:http";
import { homedir } from "node:os";
import { join } from "node:path";

import { EngineError, errorFor, Unreachable, type Problem } from "./errors.js";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];

/** Advice learned from a failure (or written by a person). */
export type Lesson = Schemas["Lesson"];
/** A lesson as a request records it. */
export type LessonInput = Schemas["LessonInput"];
/** A recorded lesson, and whether it is new (else one more use). */
export type RecordedLesson = Schemas["RecordedLesson"];
export type LessonPage = Schemas["LessonPage"];
/** What learning did with one failure→recovery pattern of an action log. */
export type Learned = Schemas["Learned"];
/** Something true of a site, with a confidence. */
export type Fact = Schemas["Fact"];
export type FactList = Schemas["FactList"];
/** One sighting of a fact. */
export type ObserveFact = Schemas["ObserveFact"];
/** What one sighting of a fact did (result: new, confirmed, contradicted, quarantined…). */
export type FactOutcome = Schemas["Outcome"];
/** Where an element of a site is, with its record. */
export type Selector = Schemas["Selector"];
export type SelectorObservation = Schemas["SelectorObservation"];
/** A recorded successful run, replayed for similar tasks. */
export type Trajectory = Schemas["Trajectory"];
export type TrajectoryInput = Schemas["TrajectoryInput"];
/** One step of a trajectory. */
export type Step = Schemas["StepInput"];
/** The recorded run most like a task. */
export type TrajectoryMatch = Schemas["TrajectoryMatch"];
/** Everything memory holds for a page and a goal, within a token budget (text: the prompt block). */
export type Context = Schemas["MemctxResult"];
/** A run's manifest. */
export type Run = Schemas["Manifest"];
export type RunPage = Schemas["RunPage"];
export type CreateRun = Schemas["CreateRun"];
export type RunProgress = Schemas["RunProgress"];
export type RunCompletion = Schemas["RunCompletion"];
export type Namespace = Schemas["NamespaceInfo"];
export type Health = Schemas["Health"];
/** One line of an action log as /v1/learn reads it (the engine's own shape). */
export interface ActionRecord {
  step?: number;
  action: string;
  ref?: string;
  value?: string;
  ok: boolean;
  error?: string;
  url?: string;
  origin?: "browser" | "engine";
}

// The operation of a path and method, and what it takes and answers, read
// from the generated paths: a client method whose path, query or body no
// longer matches the document fails to compile.
type Method = "get" | "post" | "delete";
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type PathOf<O> = O extends { parameters: { path?: infer X } } ? NonNullable<X> : never;
type BodyOf<O> = O extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type AnswerOf<O> = O extends { responses: { 200: { content: { "application/json": infer A } } } } ? A : unknown;

/** The query of the operation at path P and method M. */
export type Query<P extends keyof paths, M extends Method = "get"> = QueryOf<Op<P, M>>;

type QueryValue = string | number | boolean | undefined | null;

/** The options of a request sent with {@link Client.request}. */
export interface RequestOptions {
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  body?: unknown;
  /** A body sent as is (with contentType). */
  raw?: string;
  contentType?: string;
}

export interface ClientOptions {
  /** The data dir's serve.token, for a TCP listener (default: ENGINE_TOKEN). */
  token?: string;
  /** How long one request may take, in milliseconds (default 30000). */
  timeoutMs?: number;
  /** Every request runs in this namespace of the store ("-": the default). */
  namespace?: string;
  /** What the client writes is stamped with this run (Engine-Run) as learned. */
  run?: string;
  /** And with the model that learned it (Engine-Model). */
  model?: string;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/**
 * The data dir the engine command line uses when none is named:
 * $XDG_DATA_HOME/engine, else ~/.local/share/engine.
 */
export function defaultDataDir(): string {
  const xdg = process.env.XDG_DATA_HOME;
  if (xdg) return join(xdg, "engine");
  let home = "";
  try {
    home = homedir();
  } catch {
    // no home directory: said below
  }
  if (!home) {
    throw new Error("no server address: give one, or set ENGINE_SERVER (or ENGINE_DATA_DIR for its socket); there is no home directory for the default data dir");
  }
  return join(home, ".local", "share", "engine");
}

/**
 * Talks to one memory server. address is http://host:port (a TCP
 * listener: give the token), unix:///path/to/engine.sock or a socket's
 * path; without one, ENGINE_SERVER (as the CLI) or ENGINE_URL is read, then the socket of
 * ENGINE_DATA_DIR, then, as the CLI, the socket of the default data dir
 * ({@link defaultDataDir}), where a plain engine serve listens. Every method throws an {@link EngineError} subclass
 * (BadRequest, NotFound, Unauthorized, …) when the server answers with a
 * problem.
 */
export class Client {
  readonly token?: string;
  readonly timeoutMs: number;
  readonly namespace?: string;
  readonly runId?: string;
  readonly model?: string;
  private readonly base?: string; // http(s)://host:port
  private readonly socket?: string; // a unix socket's path
  private readonly hint: string = ""; // where the address came from, when the caller did not say

  constructor(address?: string, opts: ClientOptions = {}) {
    address ||= process.env.ENGINE_SERVER || process.env.ENGINE_URL; // ENGINE_SERVER: as the engine command line
    if (!address) {
      let data = process.env.ENGINE_DATA_DIR;
      if (!data) {
        // What engine serve holds when nothing names a data dir.
        data = defaultDataDir();
        this.hint = " (no address given and ENGINE_SERVER, ENGINE_DATA_DIR unset: the default data dir's socket)";
      }
      address = join(data, "engine.sock");
    }
    this.token = opts.token ?? process.env.ENGINE_TOKEN;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.namespace = opts.namespace;
    this.runId = opts.run;
    this.model = opts.model;
    if (address.startsWith("unix://")) {
      this.socket = address.slice("unix://".length);
    } else if (address.startsWith("http://") || address.startsWith("https://")) {
      let u: URL;
      try {
        u = new URL(address);
      } catch {
        throw new Error(`${JSON.stringify(address)}: not a URL`);
      }
      if (!u.hostname) throw new Error(`${JSON.stringify(address)}: no host`);
      this.base = u.origin;
    } else if (address.startsWith("/")) {
      this.socket = address;
    } else {
      throw new Error(`${JSON.stringify(address)}: want http://host:port, unix:///path/engine.sock or a socket's path`);
    }
    if (this.socket === "") throw new Error(`${JSON.stringify(address)}: no socket path`);
  }

  /** A client like this one whose requests run in namespace ("-": the default). */
  withNamespace(namespace: string): Client {
    const c = Object.create(Client.prototype) as Client;
    Object.assign(c, this, { namespace });
    return c;
  }

  /**
   * A client like this one whose writes are stamped as run's (Engine-Run,
   * Engine-Source: learned), and model's when given (Engine-Model): what it
   * records can be traced to the run, and reverted with it.
   */
  withRun(run: string, model?: string): Client {
    const c = Object.create(Client.prototype) as Client;
    Object.assign(c, this, { runId: run, model: model ?? this.model });
    return c;
  }

  // The transport.

  /** Sends one request and returns its decoded JSON answer; any route of the API can be called this way. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) {
      if (v === undefined || v === null || v === "") continue;
      q.set(k, String(v));
    }
    const qs = q.toString();
    const target = qs ? `${path}?${qs}` : path;
    const headers: Record<string, string> = { Accept: "application/json" };
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (method !== "GET") headers["Content-Type"] = opts.contentType ?? "application/json";
    if (this.token) headers["Authorization"] = `Bearer ${this.token}`;
    if (this.namespace) headers["Engine-Namespace"] = this.namespace;
    if (this.runId) {
      headers["Engine-Run"] = this.runId;
      headers["Engine-Source"] = "learned";
    }
    if (this.model) headers["Engine-Model"] = this.model;
    let ans: Answer;
    try {
      ans = this.socket !== undefined
        ? await this.overSocket(method, target, headers, body)
        : await this.overFetch(method, target, headers, body);
    } catch (e) {
      throw this.unreachable(method, path, e);
    }
    if (ans.status >= 400) {
      let problem: Partial<Problem> = {};
      let detail = ans.text.trim();
      if (ans.contentType.startsWith("application/problem+json") || ans.contentType.startsWith("application/json")) {
        try {
          problem = JSON.parse(ans.text) as Partial<Problem>;
          detail = problem.detail || problem.title || detail;
        } catch {
          // not JSON after all: the text is the detail
        }
      }
      throw errorFor(ans.status, detail, problem);
    }
    if (ans.text === "") return undefined as T;
    try {
      return JSON.parse(ans.text) as T;
    } catch (e) {
      throw new EngineError(ans.status, `${method} ${path}: the answer is not JSON: ${(e as Error).message}`);
    }
  }

  /**
   * The Unreachable error of a request that got no answer: the address, what
   * the transport said (fetch hides it in cause), and what to check.
   */
  private unreachable(method: string, path: string, e: unknown): Unreachable {
    const where = this.socket !== undefined ? `unix://${this.socket}` : this.base;
    let cause = e as { name?: string; message?: string; code?: string; cause?: unknown };
    while (cause?.cause && typeof cause.cause === "object") cause = cause.cause as typeof cause;
    let why = cause?.message || String(e);
    if (cause?.name === "TimeoutError") why = `no answer in ${this.timeoutMs} ms`;
    if (cause?.code && !why.includes(cause.code)) why = `${cause.code}: ${why}`;
    const err = new Unreachable(0, `${method} ${path}: no answer from the engine server at ${where}${this.hint} (${why}): is engine serve running there?`);
    (err as { cause?: unknown }).cause = e;
    return err;
  }

  private async overFetch(method: string, target: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const resp = await fetch(this.base + target, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
    return { status: resp.status, contentType: resp.headers.get("Content-Type") ?? "", text: await resp.text() };
  }

  private overSocket(method: string, target: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { socketPath: this.socket, path: target, method, headers: { Host: "engine", ...headers }, timeout: this.timeoutMs },
        (resp) => {
          const chunks: Buffer[] = [];
          resp.on("data", (c: Buffer) => chunks.push(c));
          resp.on("error", reject);
          resp.on("end", () =>
            resolve({
              status: resp.statusCode ?? 0,
              contentType: String(resp.headers["content-type"] ?? ""),
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${target}: no answer in ${this.timeoutMs} ms`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  /** A request to a route of the document, typed by it. */
  private call<P extends keyof paths, M extends Method>(
    method: M,
    path: P,
    opts: { path?: PathOf<Op<P, M>>; query?: QueryOf<Op<P, M>>; body?: BodyOf<Op<P, M>> } = {},
  ): Promise<AnswerOf<Op<P, M>>> {
    let p = path as string;
    for (const [k, v] of Object.entries((opts.path ?? {}) as Record<string, string>)) {
      p = p.replace(`{${k}}`, encodeURIComponent(v));
    }
    return this.request(method.toUpperCase(), p, { query: opts.query as Record<string, QueryValue>, body: opts.body });
  }

  // The API itself.

  /** GET /v1/health: {status: "ok", schema: N}. */
  health(): Promise<Health> {
    return this.call("get", "/v1/health");
  }

  /** GET /v1/openapi.json: the API's OpenAPI 3.1 document (served without a token). */
  openapi(): Promise<Record<string, unknown>> {
    return this.call("get", "/v1/openapi.json");
  }

  // Recall: what an agent reads while it works.

  /** The lessons of every system prompt. */
  tier1(): Promise<Lesson[]> {
    return this.call("get", "/v1/recall/tier1");
  }

  /** Tips for a failed command's error (on domain, when given). */
  recallError(command: string, error: string, domain?: string): Promise<Lesson[]> {
    return this.call("post", "/v1/recall/error", { body: { command, error, ...(domain ? { domain } : {}) } });
  }

  /** Tips for entering a site. */
  recallDomain(host: string): Promise<Lesson[]> {
    return this.call("get", "/v1/recall/domain", { query: { host } });
  }

  /** The recorded run most like goal on domain, with its steps adapted to the goal. */
  findTrajectory(domain: string, goal: string): Promise<TrajectoryMatch> {
    return this.call("get", "/v1/recall/trajectory", { query: { domain, goal } });
  }

  /** Everything memory holds for a page and a goal (and the tips for the last error), within budget tokens. */
  context(url: string, goal: string, opts: Omit<Query<"/v1/context">, "url" | "goal"> = {}): Promise<Context> {
    return this.call("get", "/v1/context", { query: { url, goal, ...opts } });
  }

  // Lessons.

  /** A page of lessons: Tier 1 first, then by use; next is the next page's cursor. */
  lessons(query: Query<"/v1/lessons"> = {}): Promise<LessonPage> {
    return this.call("get", "/v1/lessons", { query });
  }

  lesson(id: string): Promise<Lesson> {
    return this.call("get", "/v1/lessons/{id}", { path: { id } });
  }

  /** Records a lesson, or counts one more use of the lesson with the same failed command and error pattern. */
  recordLesson(lesson: LessonInput): Promise<RecordedLesson> {
    return this.call("post", "/v1/lessons", { body: lesson });
  }

  /** Counts one use of a lesson on domain; helped says the action after it succeeded. */
  useLesson(id: string, domain: string, helped = false): Promise<Lesson> {
    return this.call("post", "/v1/lessons/{id}/use", { path: { id }, body: { domain, helped } });
  }

  /** Rewrites a lesson's text (its earlier text stays in its history). */
  editLesson(id: string, text: string): Promise<Lesson> {
    return this.call("post", "/v1/lessons/{id}/edit", { path: { id }, body: { lesson: text } });
  }

  async removeLesson(id: string): Promise<void> {
    await this.call("delete", "/v1/lessons/{id}", { path: { id } });
  }

  /** Learns lessons from a run's action log: JSON lines, or a list of lines or of action records. */
  learn(actions: string | ReadonlyArray<string | ActionRecord>, domain?: string): Promise<Learned[]> {
    const raw = typeof actions === "string"
      ? actions
      : actions.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join("\n") + "\n";
    return this.request("POST", "/v1/learn", { query: { domain }, raw, contentType: "application/jsonl" });
  }

  // Facts.

  facts(query: Query<"/v1/facts"> = {}): Promise<FactList> {
    return this.call("get", "/v1/facts", { query });
  }

  /** One sighting of a fact (type: timing, selector, pattern or quirk): raises its confidence, lowers rivals'. */
  observeFact(fact: ObserveFact): Promise<FactOutcome> {
    return this.call("post", "/v1/facts/observe", { body: fact });
  }

  // Selectors.

  /** Known selectors, best first (url: those a prompt gets on that page). */
  async selectors(query: Query<"/v1/selectors"> = {}): Promise<Selector[]> {
    return (await this.call("get", "/v1/selectors", { query })).selectors ?? [];
  }

  /** Records that selector found (or, failed, did not find) the element role/name on domain. */
  recordSelector(obs: SelectorObservation): Promise<Selector> {
    return this.call("post", "/v1/selectors", { body: obs });
  }

  // Trajectories.

  async trajectories(query: Query<"/v1/trajectories"> = {}): Promise<Trajectory[]> {
    return (await this.call("get", "/v1/trajectories", { query })).trajectories ?? [];
  }

  /** A trajectory by id; the id alone finds it (the domain, when given, must match). */
  trajectory(id: string, domain?: string): Promise<Trajectory> {
    return this.call("get", "/v1/trajectories/{id}", { path: { id }, query: domain ? { domain } : {} });
  }

  /** Records a successful run's steps (a run of the same goal template replaces it). */
  recordTrajectory(t: TrajectoryInput): Promise<Trajectory> {
    return this.call("post", "/v1/trajectories", { body: t });
  }

  async removeTrajectory(id: string, domain?: string): Promise<void> {
    await this.call("delete", "/v1/trajectories/{id}", { path: { id }, query: domain ? { domain } : {} });
  }

  // Runs.

  runs(query: Query<"/v1/runs"> = {}): Promise<RunPage> {
    return this.call("get", "/v1/runs", { query });
  }

  run(id: string): Promise<Run> {
    return this.call("get", "/v1/runs/{id}", { path: { id } });
  }

  /** Registers a run (give start_url or domain); run_id is made when not given. */
  startRun(run: CreateRun): Promise<Run> {
    return this.call("post", "/v1/runs", { body: run });
  }

  runProgress(id: string, progress: RunProgress): Promise<Run> {
    return this.call("post", "/v1/runs/{id}/progress", { path: { id }, body: progress });
  }

  /** Completes (success) or fails a run; its session summary is recorded too. */
  async completeRun(id: string, completion: RunCompletion): Promise<Run> {
    return (await this.call("post", "/v1/runs/{id}/complete", { path: { id }, body: completion })).run;
  }

  // Namespaces.

  /** The namespaces of the store, with their sizes. */
  async namespaces(): Promise<Namespace[]> {
    return (await this.call("get", "/v1/namespaces")).namespaces ?? [];
  }

  /**
   * Makes namespace name (an admin's token, or the socket): true when it is
   * new, false when it existed. Naming a namespace that does not exist is
   * NotFound: namespaces are made explicitly.
   */
  async createNamespace(name: string): Promise<boolean> {
    return (await this.call("post", "/v1/namespaces", { body: { name } })).created;
  }
}
