import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What a scripted upstream answers one request with; headers as raw pairs, in order. */
export interface ScriptedAnswer {
  status: number;
  /** The reason phrase, when not the usual one. */
  statusText?: string;
  headers?: Array<[string, string]>;
  body?: string | Buffer;
}

/** A request as the upstream received it, for comparing what the proxy forwarded. */
export interface ReceivedRequest {
  method: string;
  url: string;
  rawHeaders: string[];
  body: Buffer;
}

export interface ScriptedUpstream {
  /** The base address, ending in /v1. */
  url: string;
  received: ReceivedRequest[];
  /** Connections opened to it, to see keep-alive at work. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * An upstream whose answers the test writes: each request is answered by `answer`, so that a test can
 * play exactly the traffic a state rule is about, or bytes a JSON library would change.
 */
export async function startScriptedUpstream(
  answer: (request: ReceivedRequest) => ScriptedAnswer,
): Promise<ScriptedUpstream> {
  const received: ReceivedRequest[] = [];
  let connections = 0;
  const server: Server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const got = {
        method: request.method ?? "",
        url: request.url ?? "",
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks),
      };
      received.push(got);
      const { status, statusText, headers = [], body } = answer(got);
      response.sendDate = false;
      if (statusText === undefined) response.writeHead(status, headers.flat());
      else response.writeHead(status, statusText, headers.flat());
      response.end(body);
    });
  });
  server.on("connection", (_socket: Socket) => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    received,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const json = (status: number, body: string): ScriptedAnswer => ({
  status,
  headers: [["Content-Type", "application/json"]],
  body,
});

export const errorRecord = (status: number, code: string) =>
  json(status, JSON.stringify({ code, message: `${code} happened`, status }));
