#!/usr/bin/env node
// One turn of an agent loop against toolwire's HTTP API, with Node's own
// fetch (Node 18 or later, no packages). The model's response stream (here a
// recorded one, stream.sse) is uploaded as it arrives, so each tool call
// starts while the model is still writing; the results are read as
// server-sent events in call order and become the next request's
// tool_result message.
//
//   toolwire serve &
//   node examples/node/agent.mjs [--api URL] [--stream FILE] [--format anthropic]
//
// With API tokens configured, set TOOLWIRE_TOKEN to the tenant's token.
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    api: { type: "string", default: "http://127.0.0.1:8081" },
    stream: { type: "string", default: join(dirname(fileURLToPath(import.meta.url)), "stream.sse") },
    format: { type: "string", default: "anthropic" },
  },
});
const auth = process.env.TOOLWIRE_TOKEN ? { Authorization: `Bearer ${process.env.TOOLWIRE_TOKEN}` } : {};
const turn = `turn_node_${randomUUID().replaceAll("-", "")}`;

// The recorded stream, event by event at a model's pace, as a request body.
function modelStream(path) {
  const events = readFileSync(path, "utf8").split("\n\n").filter((e) => e.trim());
  return new ReadableStream({
    async pull(controller) {
      const e = events.shift();
      if (e === undefined) return controller.close();
      await new Promise((r) => setTimeout(r, 10));
      controller.enqueue(new TextEncoder().encode(e + "\n\n"));
    },
  });
}

// The turn's results in call order, until done. A dropped connection is
// resumed with Last-Event-ID: no result is missed or read twice.
async function* results(api, turn) {
  let lastId;
  for (;;) {
    const headers = { ...auth, Accept: "text/event-stream", ...(lastId !== undefined && { "Last-Event-ID": lastId }) };
    try {
      const resp = await fetch(`${api}/v1/turns/${turn}/results`, { headers });
      if (!resp.ok) throw Object.assign(new Error(`results: ${resp.status} ${await resp.text()}`), { fatal: true });
      const decoder = new TextDecoder();
      let buf = "";
      for await (const chunk of resp.body) {
        buf += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const lines = buf.slice(0, end).split("\n");
          buf = buf.slice(end + 2);
          const field = (name) => lines.find((l) => l.startsWith(name + ": "))?.slice(name.length + 2);
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (field("event") === "result") {
            lastId = field("id");
            yield JSON.parse(data);
          }
          if (field("event") === "done") return;
        }
      }
    } catch (e) {
      if (e.fatal) throw e; // a refusal is not fixed by asking again
    }
    await new Promise((r) => setTimeout(r, 500)); // come back where we were
  }
}

const reading = (async () => {
  const got = [];
  for await (const r of results(args.api, turn)) {
    console.log(`result ${r.seq} ${r.tool_use_id}: ${r.content.trim()}`);
    got.push(r);
  }
  return got;
})();
const posted = await fetch(`${args.api}/v1/turns/${turn}/stream?format=${args.format}`, {
  method: "POST",
  headers: { ...auth, "Content-Type": "text/event-stream" },
  body: modelStream(args.stream),
  duplex: "half", // the body is streamed, not buffered
});
if (!posted.ok) {
  console.error(`toolwire refused the stream: ${(await posted.json()).detail}`);
  process.exit(1);
}
const summary = await posted.json();
const got = await reading;
if (got.length !== summary.calls) {
  console.error(`${summary.calls} calls, ${got.length} results`);
  process.exit(1);
}
const message = {
  role: "user",
  content: got.map((r) => ({ type: "tool_result", tool_use_id: r.tool_use_id, content: r.content, is_error: r.is_error })),
};
console.log(JSON.stringify(message, null, 2));
