import { BadRequest, Client } from "@engine-dev/engine-memory";

const mem = new Client(process.env.ENGINE_SERVER, { token: process.env.ENGINE_TOKEN });   // or new Client("unix:///…/engine.sock")
console.log((await mem.context("https://shop.example/cart", "buy a padel racket", { budget: 1000 })).text);
for (const tip of await mem.recallError("click e12", "element is not visible", "shop.example")) console.log("tip:", tip.lesson);
const got = await mem.recordLesson({ lesson: "Scroll the cart into view before clicking checkout.", category: "site_specific",
                                     failed_command: "click", error_pattern: "not visible", domain: "shop.example" });
console.log(got.created ? "recorded" : "one more use of", got.lesson.id, got.lesson.trust);
try {
  await mem.request("POST", "/v1/lessons", { body: { lesson: "x", category: "tips" } });
} catch (e) {
  if (!(e instanceof BadRequest)) throw e;
  console.log("refused:", e.detail);
}
