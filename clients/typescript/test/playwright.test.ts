// The Playwright integration on the demo shop, in the system chromium,
// against a real engine serve.
//
// clients/typescript/client_test.go serves the shop (ENGINE_TEST_SHOP) and
// the memory (ENGINE_TEST_URL, ENGINE_TEST_TOKEN) and names the browser
// (ENGINE_CHROMIUM). Two runs of one task in the shop's traps: a click
// under the cookie wall (the first run only), a fill on a search widget
// that is no input until clicked. The first run's failures find only
// seeded tips, and finishing it learns the fill's recovery and records the
// trajectory; the second run's same failure comes back with that lesson.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { after, before, test } from "node:test";

import { chromium, type Browser } from "playwright-core";

import { Client } from "../src/index.js";
import { withMemory, type ActionError, type MemoryPage } from "../src/playwright.js";

const SHOP = process.env.ENGINE_TEST_SHOP ?? "";
const URL_ = process.env.ENGINE_TEST_URL ?? "";
const TOKEN = process.env.ENGINE_TEST_TOKEN ?? "";
const CHROMIUM = process.env.ENGINE_CHROMIUM || "/usr/bin/chromium";
const GOAL = "search for padel rackets and open the first result";

let browser: Browser;
let mem: Client;
let host: string;

before(async () => {
  assert.ok(SHOP && URL_, "ENGINE_TEST_SHOP and ENGINE_TEST_URL are not set: run these from client_test.go");
  assert.ok(existsSync(CHROMIUM), `no browser at ${CHROMIUM}: set ENGINE_CHROMIUM (scripts/install-deps.sh installs chromium)`);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  const name = "tspw" + randomUUID().replaceAll("-", "").slice(0, 10);
  const root = new Client(URL_, { token: TOKEN });
  await root.createNamespace(name);
  mem = root.withNamespace(name);
  host = new URL(SHOP).hostname;
});

after(async () => {
  await browser?.close();
});

/** A run of the task's failures, as the run met them. */
interface Failures {
  mp: MemoryPage;
  covered?: ActionError; // a click under the cookie wall
  notInput: ActionError; // a fill on the search widget, which is no input until clicked
  close: () => Promise<void>;
}

/** An action that must fail: its error, as the wrapper threw it. */
async function fails(action: Promise<unknown>): Promise<ActionError> {
  try {
    await action;
  } catch (e) {
    const err = e as ActionError;
    assert.ok(Array.isArray(err.tips), "the failure came back with the memory's tips");
    assert.equal(err.tipsError, undefined);
    return err;
  }
  assert.fail("the action did not fail");
}

/**
 * One run of the task in a fresh browser context (so the cookie wall is
 * up), through its failures: a click on the search widget under the
 * cookie wall when clickFirst (recovered by accepting the cookies), and a
 * fill on the widget (recovered by clicking it, which makes it an input).
 */
async function start(runId: string, clickFirst: boolean): Promise<Failures> {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
  const seen: string[] = [];
  const mp = withMemory(page, mem, { goal: GOAL, runId, onContext: (c) => seen.push(c.domain) });
  await mp.goto(SHOP);
  assert.ok(mp.context, "the navigation fetched the site's memory");
  assert.equal(mp.context.domain, host);
  assert.deepEqual(seen, [host]);
  // Playwright retries a covered click until its timeout and names the
  // cover in its call log once it has hit-tested the point: the timeout
  // leaves a loaded machine room for that first attempt.
  let covered: ActionError | undefined;
  if (clickFirst) {
    covered = await fails(mp.click("#search-widget", { timeout: 3000 }));
    assert.equal(covered.name, "TimeoutError", "the error thrown is Playwright's own");
    assert.match(covered.recalled ?? "", /^<div .*cookie-banner.*> intercepts pointer events\n/);
  }
  await mp.click("#accept-cookies");
  const notInput = await fails(mp.fill("#search-widget", "padel rackets", { timeout: 3000 }));
  assert.match(notInput.recalled ?? "", /not an <input>/);
  return { mp, covered, notInput, close: () => ctx.close() };
}

/** The rest of the task: make the widget an input, search, dismiss the newsletter, open the first result. */
async function recover(mp: MemoryPage): Promise<void> {
  await mp.click("#search-widget");
  await mp.fill("#q", "padel rackets");
  await mp.press("#q", "Enter");
  await mp.page.waitForURL(/\/search\?/);
  await mp.press("body", "Escape");
  await mp.click("#results a >> nth=0");
  await mp.page.waitForURL(/\/item\/1$/);
  assert.equal(await mp.page.textContent("h1"), "Padel Racket Pro 3000");
  const ctx = await mp.siteMemory();
  assert.equal(ctx?.domain, host);
}

test("a failed action gets tips, a finished task is learned and recorded", async () => {
  // The first run: only the seeded lessons are known (one is about overlays).
  const one = await start("run_pw1", true);
  assert.ok(one.covered?.tips?.every((t) => t.source === "seed"), JSON.stringify(one.covered?.tips));
  assert.ok(one.notInput.tips?.every((t) => t.source === "seed"), JSON.stringify(one.notInput.tips));
  await recover(one.mp);
  const done = await one.mp.finish({ success: true, summary: "opened Padel Racket Pro 3000" });
  await one.close();
  assert.equal(done.run?.status, "completed");
  assert.ok(done.trajectory, "the task was recorded as a trajectory");
  assert.deepEqual(
    done.trajectory.steps.map((s) => [s.action, s.selector ?? s.url]),
    [
      ["navigate", SHOP],
      ["click", "#accept-cookies"],
      ["click", "#search-widget"],
      ["fill", "#q"],
      ["press", "#q"],
      ["press", "body"],
      ["click", "#results a >> nth=0"],
    ],
  );
  assert.equal(done.trajectory.steps[3].input_type, "search", "a fill's step says what it filled");
  assert.deepEqual(one.mp.actions.filter((a) => a.action === "fill").map((a) => a.value), [undefined, undefined]);
  // A click recovered by a click teaches nothing (learning pairs a failed
  // verb with another one); the fill recovered by a click does.
  assert.deepEqual(
    done.learned.map((l) => [l.lesson.failed_command, l.recovery, l.created]),
    [["fill", "click #search-widget", true]],
  );
  const lesson = done.learned[0].lesson;
  assert.equal(lesson.category, "error_recovery");
  assert.equal(lesson.provenance?.run, "run_pw1", "what the run taught is stamped as the run's");
  assert.equal(done.trajectory.provenance?.run, "run_pw1");

  // The server holds them.
  assert.ok((await mem.trajectories({ domain: host })).some((t) => t.id === done.trajectory?.id));
  assert.equal((await mem.lesson(lesson.id)).failed_command, "fill");
  const run = await mem.run("run_pw1");
  assert.deepEqual([run.status, run.success, run.summary], ["completed", true, "opened Padel Racket Pro 3000"]);

  // The second run's same failure comes back with the lesson, and the
  // site's memory shows the recorded trajectory.
  const two = await start("run_pw2", false);
  assert.ok(two.notInput.tips?.some((t) => t.id === lesson.id), JSON.stringify(two.notInput.tips));
  assert.equal(two.mp.context?.match?.trajectory?.id, done.trajectory.id);
  await recover(two.mp);
  const again = await two.mp.finish({ success: true });
  await two.close();
  // Another log with the same failure and recovery: one more use of the lesson.
  assert.deepEqual(again.learned.map((l) => [l.lesson.id, l.created]), [[lesson.id, false]]);
  assert.equal((await mem.lesson(lesson.id)).use_count, lesson.use_count + 1);
  assert.equal(again.trajectory?.id, done.trajectory.id, "the same task's trajectory is replaced, not added");
});

test("a value filled into a secret field is stored as a placeholder, whatever marks it", async () => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const mp = withMemory(page, mem, { goal: "sign in to the shop" });
  await mp.goto(SHOP);
  await page.evaluate(`document.body.insertAdjacentHTML("beforeend",
    '<label for="kw">Kennwort</label><input id="kw" type="text">' +
    '<input id="ac" type="text" autocomplete="username current-password" aria-label="Login">' +
    '<input id="nm" type="text" name="pass">' +
    '<input id="pw" type="password">')`);
  const fields = ["#kw", "#ac", "#nm", "#pw"];
  for (const [i, f] of fields.entries()) await mp.fill(f, `typed-secret-${i}-value`);
  const done = await mp.finish({ success: true });
  await ctx.close();
  const fills = (done.trajectory?.steps ?? []).filter((s) => s.action === "fill");
  assert.deepEqual(fills.map((s) => [s.selector, s.value, s.secret]), fields.map((f) => [f, "{{secret}}", true]));
  assert.doesNotMatch(JSON.stringify(await mem.trajectories({ domain: host })), /typed-secret/);
});

test("an action's error is thrown even when memory cannot be reached", async () => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  page.setDefaultTimeout(10_000);
  const mp = withMemory(page, new Client("http://127.0.0.1:9", { timeoutMs: 2000 }), { goal: GOAL });
  await page.goto(SHOP);
  await assert.rejects(mp.click("#search-widget", { timeout: 500 }), (e: ActionError) => {
    assert.equal(e.name, "TimeoutError");
    assert.deepEqual(e.tips, []);
    assert.ok(e.tipsError instanceof Error);
    return true;
  });
  await ctx.close();
});
