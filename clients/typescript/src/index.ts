// @engine-dev/engine-memory: the memory of LLM browser agents, from TypeScript.
//
//   import { Client } from "@engine-dev/engine-memory";
//   const mem = new Client("http://127.0.0.1:7070", { token });
//   const tips = await mem.recallError("click e12", "element is not visible", "shop.example");
//
// The types come from the server's OpenAPI document (src/schema.d.ts,
// made by `npm run generate`); the server's problems are thrown as
// EngineError subclasses.

export * from "./client.js";
export * from "./errors.js";
export type { components, operations, paths } from "./schema.js";
