// Memory for a Playwright agent: a Page wrapped so that a failed action
// comes back with the memory's tips for its error, a navigation fetches the
// site's memory, and a finished task is learned from and recorded.
//
//   const mp = withMemory(page, client, { goal: "search for padel rackets" });
//   await mp.goto("https://shop.example/");
//   try { await mp.click("#search"); } catch (e) { console.log((e as ActionError).tips); }
//   await mp.finish({ success: true });

import type { Page, Response } from "playwright-core";

import type { ActionRecord, Client, Context, Learned, Lesson, Run, Step, Trajectory } from "./client.js";

/** An action's error as the wrapper throws it: Playwright's own error, with what memory said about it. */
export interface ActionError extends Error {
  /** The lessons memory holds for this failure (empty: none yet). */
  tips?: Lesson[];
  /** The error text the tips were recalled for (and learning reads). */
  recalled?: string;
  /** Why the tips could not be fetched, when they could not (the action's error is thrown all the same). */
  tipsError?: unknown;
}

export interface MemoryOptions {
  /** The task, as the agent was given it: the goal of the run, its context and its trajectory. */
  goal: string;
  /** The run's id (made by the server when not given). */
  runId?: string;
  /** The context's token budget (the server's default when not given). */
  budget?: number;
  /** Called with the site's memory after each navigation. */
  onContext?: (ctx: Context) => void;
}

/** What finishing a task did. */
export interface Finished {
  /** The task's steps, recorded as a trajectory (only on success). */
  trajectory?: Trajectory;
  /** What learning made of the failure→recovery pairs of the task. */
  learned: Learned[];
  /** The run, completed or failed. */
  run?: Run;
}

/**
 * A Playwright Page with memory. Its actions run on the page as
 * Playwright's do; each is logged (for learning) and, when it succeeds,
 * kept as a step of the task's trajectory. A failed action throws
 * Playwright's error with tips, recalled, and tipsError set.
 */
export class MemoryPage {
  readonly page: Page;
  readonly client: Client;
  readonly goal: string;
  /** The site's memory of the current page (after the first navigation). */
  context?: Context;
  /** The task's action log, as /v1/learn reads it. */
  readonly actions: ActionRecord[] = [];
  /** The task's successful steps, the trajectory finish records. */
  readonly steps: Step[] = [];
  /** The run registered at the first navigation. */
  run?: Run;
  private readonly opts: MemoryOptions;
  private domain = "";
  private contextURL = "";

  constructor(page: Page, client: Client, opts: MemoryOptions) {
    if (!opts.goal?.trim()) throw new Error("withMemory: a goal is required");
    this.page = page;
    this.client = client;
    this.goal = opts.goal;
    this.opts = opts;
  }

  /** Loads url (Page.goto), registers the run at the first one, and fetches the site's memory. */
  async goto(url: string, options?: Parameters<Page["goto"]>[1]): Promise<Response | null> {
    const resp = await this.act("navigate", "", url, () => this.page.goto(url, options), { url });
    if (!this.run) {
      this.run = await this.client.startRun({ goal: this.goal, start_url: this.page.url(), run_id: this.opts.runId });
    }
    return resp;
  }

  click(selector: string, options?: Parameters<Page["click"]>[1]): Promise<void> {
    return this.act("click", selector, "", () => this.page.click(selector, options));
  }

  /**
   * Fills selector with value. The step records the input's type and its
   * name (its labels, aria-label, placeholder or title, else its name
   * attribute), so the server stores a secret field's value as a
   * placeholder (a password input, a field labelled "Kennwort", one named
   * "pwd"); an autocomplete of a credential or card marks it secret here.
   * The action log learning reads never holds a filled value.
   */
  fill(selector: string, value: string, options?: Parameters<Page["fill"]>[2]): Promise<void> {
    const step: Partial<Step> = {};
    return this.act("fill", selector, value, async () => {
      await this.page.fill(selector, value, options);
      const f = await this.page
        .locator(selector)
        .first()
        .evaluate(fieldOf, undefined, { timeout: 1000 })
        .catch(() => null);
      if (!f) return;
      if (f.type) step.input_type = f.type;
      if (f.name) step.name = f.name;
      if (f.type.toLowerCase() === "password" || secretAutocomplete(f.autocomplete)) step.secret = true;
    }, step);
  }

  press(selector: string, key: string, options?: Parameters<Page["press"]>[2]): Promise<void> {
    return this.act("press", selector, key, () => this.page.press(selector, key, options));
  }

  check(selector: string, options?: Parameters<Page["check"]>[1]): Promise<void> {
    return this.act("check", selector, "", () => this.page.check(selector, options));
  }

  hover(selector: string, options?: Parameters<Page["hover"]>[1]): Promise<void> {
    return this.act("hover", selector, "", () => this.page.hover(selector, options));
  }

  async selectOption(selector: string, value: string, options?: Parameters<Page["selectOption"]>[2]): Promise<string[]> {
    return this.act("select", selector, value, () => this.page.selectOption(selector, value, options));
  }

  /**
   * Runs any other action fn as one step named action on selector (with
   * value): logged, recorded when it succeeds, thrown with tips when it
   * fails. A page that moved to another URL gets its memory fetched.
   */
  async act<T>(action: string, selector: string, value: string, fn: () => Promise<T>, step: Partial<Step> = {}): Promise<T> {
    const url = this.page.url();
    const rec: ActionRecord = { step: this.actions.length + 1, action, ok: false, url: url === "about:blank" ? step.url : url };
    if (selector) rec.ref = selector;
    if (value && action !== "navigate" && action !== "fill") rec.value = value; // a filled value may be a secret
    if (action === "navigate") rec.ref = value;
    let out: T;
    try {
      out = await fn();
    } catch (e) {
      if (typeof e !== "object" || e === null) throw e;
      const err = e as ActionError;
      const text = describeError(err);
      rec.error = text;
      rec.origin = "browser";
      this.actions.push(rec);
      err.recalled = text;
      try {
        const host = hostOf(rec.url ?? "") || this.domain;
        err.tips = await this.client.recallError(command(rec), text, host || undefined);
      } catch (re) {
        err.tips = [];
        err.tipsError = re;
      }
      throw err;
    }
    rec.ok = true;
    this.actions.push(rec);
    const s: Step = { action, verified: true, ...step };
    if (selector) s.selector = selector;
    if (value && action !== "navigate") s.value = value;
    if (!s.url && url !== "about:blank") s.url = url;
    this.steps.push(s);
    await this.siteMemory();
    return out;
  }

  /**
   * The site's memory of the page the browser is on: fetched again when
   * the page moved since the last fetch (the context of its URL and the
   * goal, with the domain's lessons, facts, selectors and the closest
   * trajectory).
   */
  async siteMemory(): Promise<Context | undefined> {
    const url = this.page.url();
    if (!/^https?:/.test(url)) return this.context;
    if (url === this.contextURL && this.context) return this.context;
    this.domain ||= hostOf(url);
    const ctx = await this.client.context(url, this.goal, this.opts.budget ? { budget: this.opts.budget } : {});
    this.context = ctx;
    this.contextURL = url;
    this.opts.onContext?.(ctx);
    return ctx;
  }

  /**
   * Ends the task: learns from the failure→recovery pairs of its action
   * log, records its steps as a trajectory when it succeeded (both stamped
   * as the run's), and completes (or fails) its run.
   */
  async finish(result: { success: boolean; summary?: string; reason?: string }): Promise<Finished> {
    const out: Finished = { learned: [] };
    const domain = this.domain || hostOf(this.page.url());
    const writer = this.run ? this.client.withRun(this.run.run_id) : this.client;
    if (this.actions.some((a) => !a.ok)) {
      out.learned = await writer.learn(this.actions, domain);
    }
    if (result.success && domain && this.steps.length > 0) {
      out.trajectory = await writer.recordTrajectory({
        domain,
        goal: this.goal,
        steps: this.steps,
        ...(this.run ? { run_id: this.run.run_id } : {}),
      });
    }
    if (this.run) {
      const url = this.page.url();
      out.run = await this.client.completeRun(this.run.run_id, {
        success: result.success,
        turn_count: this.actions.length,
        ...(result.summary ? { summary: result.summary } : {}),
        ...(result.reason ? { reason: result.reason } : {}),
        ...(/^https?:/.test(url) ? { final_url: url } : {}),
      });
      this.run = out.run;
    }
    return out;
  }
}

/** Wraps page with the memory client speaks to, for the task opts.goal. */
export function withMemory(page: Page, client: Client, opts: MemoryOptions): MemoryPage {
  return new MemoryPage(page, client, opts);
}

/** The command line of an action record, as learning writes it ("click #buy"). */
function command(rec: ActionRecord): string {
  return [rec.action, rec.ref, rec.value].filter(Boolean).join(" ");
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

// The lines of a Playwright call log that say why an action could not
// happen (its first line says only that it timed out).
const why = /intercepts pointer events|not visible|not enabled|not editable|not an? <?\w+|detached|outside of the viewport|not stable|does not have a role/i;

// Terminal escape sequences: Playwright colours its call log.
// eslint-disable-next-line no-control-regex
const ansi = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/**
 * The text of a Playwright error that memory matches and learns from: its
 * cause from the call log first (a page's refusal, say "<div
 * id="cookie-banner"> intercepts pointer events"), then its message
 * without the API's name ("page.click: ").
 */
export function describeError(err: unknown): string {
  const msg = (err instanceof Error ? err.message : String(err)).replace(ansi, "");
  const [head, log = ""] = msg.split(/\n\s*Call log:\s*\n/);
  const first = head.split("\n")[0].replace(/^[\w.]+:\s*/, "").trim();
  const causes = log
    .split("\n")
    .map((l) => l.replace(/^\s*-\s*/, "").trim())
    .filter((l) => why.test(l));
  const cause = causes.at(-1);
  return cause && cause !== first ? `${cause}\n${first}` : first;
}

/** What fill records of a field: its type, autocomplete and name. */
interface Field {
  type: string;
  autocomplete: string;
  name: string;
}

/**
 * fieldOf runs in the page: the field's type, autocomplete and name (its
 * labels, else aria-label, placeholder, title, the name attribute, the id).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function fieldOf(e: any): Field {
  const text = (n: { textContent?: string | null } | null) => (n?.textContent ?? "").replace(/\s+/g, " ").trim();
  const labels = Array.from((e.labels ?? []) as ArrayLike<{ textContent?: string | null }>).map(text).filter(Boolean).join(" ");
  const attr = (a: string): string => (e.getAttribute?.(a) as string | null) ?? "";
  const name = labels || attr("aria-label") || attr("placeholder") || attr("title") || attr("name") || attr("id");
  return { type: attr("type") || (e.tagName === "TEXTAREA" ? "textarea" : ""), autocomplete: attr("autocomplete"), name };
}

/** Whether an autocomplete attribute names a credential or a card (the server's redact.SecretField). */
function secretAutocomplete(ac: string): boolean {
  return ac
    .toLowerCase()
    .split(/\s+/)
    .some((t) => t === "current-password" || t === "new-password" || t === "one-time-code" || t.startsWith("cc-"));
}
