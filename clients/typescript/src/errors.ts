// The server's application/problem+json answers, thrown as typed errors.

import type { components } from "./schema.js";

/** An RFC 9457 problem as the server sends it: detail is the message the CLI prints. */
export type Problem = components["schemas"]["Problem"];

/**
 * An answer of the memory server that is not a success: status is the HTTP
 * status, detail the server's one-line message, problem the whole document
 * (empty when the answer was not problem+json).
 */
export class EngineError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly problem: Partial<Problem>;

  constructor(status: number, detail: string, problem: Partial<Problem> = {}) {
    super(`${status}: ${detail}`);
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
    this.problem = problem;
  }
}

/** 400: bad input; the detail names the problem. */
export class BadRequest extends EngineError {}
/** 401: no token, or not the server's (TCP listeners need one). */
export class Unauthorized extends EngineError {}
/** 403: the token does not open this namespace or route, or a cross-origin request. */
export class Forbidden extends EngineError {}
/** 404: no such record, namespace or route. */
export class NotFound extends EngineError {}
/** 408: the request body stalled. */
export class RequestTimeout extends EngineError {}
/** 413: the body is over the route's limit. */
export class PayloadTooLarge extends EngineError {}
/** 415: the wrong Content-Type. */
export class UnsupportedMediaType extends EngineError {}
/** 503: the memory lock or the request's deadline ran out; retry. */
export class Busy extends EngineError {}
/** 500 and any other status: the server failed. */
export class ServerError extends EngineError {}
/**
 * Status 0: no answer at all: nothing listens at the address (the server
 * is not running, or the socket's path is wrong), or the server was silent
 * past the client's timeout. The message names the address and the cause.
 */
export class Unreachable extends EngineError {
  constructor(status: number, detail: string, problem: Partial<Problem> = {}) {
    super(status, detail, problem);
    this.message = detail; // no status to show
  }
}

const byStatus: Record<number, typeof EngineError> = {
  400: BadRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  408: RequestTimeout,
  413: PayloadTooLarge,
  415: UnsupportedMediaType,
  503: Busy,
};

/** The error of an answer's status. */
export function errorFor(status: number, detail: string, problem: Partial<Problem> = {}): EngineError {
  const E = byStatus[status] ?? ServerError;
  return new E(status, detail, problem);
}
