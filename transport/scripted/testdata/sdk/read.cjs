// Reads scripted responses with an official SDK, one request per model named, and
// prints one JSON line for each: {"ok":true,"text":…,"thinking":…,"calls":[…],"stop":…}
// or, when the SDK reported an error of its own classes (a fault), {"ok":false,
// "status":…,"error":…}. Any other exception is the SDK breaking on what it read:
// {"crash":…}. (openai's ResponseStream rejects with a Responses "error" event as it
// came, which is its report of that fault.)
// Usage: SDK_DIR=<dir with node_modules> node read.cjs <anthropic|chat|responses> <base URL> <model>...
"use strict";
const { createRequire } = require("node:module");
const path = require("node:path");
const sdk = createRequire(path.join(process.env.SDK_DIR, "package.json"));
const Anthropic = sdk("@anthropic-ai/sdk").default;
const OpenAI = sdk("openai").default;

const [format, baseURL, ...models] = process.argv.slice(2);
const tools = [{ name: "Bash", description: "Run a command.", schema: { type: "object", properties: { command: { type: "string" } } } }];
const opts = { apiKey: "sk-test", baseURL, maxRetries: 0, timeout: 10000 };

async function anthropic(model) {
  const client = new Anthropic(opts);
  const stream = client.messages.stream({
    model, max_tokens: 256, messages: [{ role: "user", content: "go" }],
    tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema })),
  });
  const msg = await stream.finalMessage();
  const out = { ok: true, text: "", thinking: "", calls: [], stop: msg.stop_reason, usage: msg.usage.output_tokens };
  for (const b of msg.content) {
    if (b.type === "text") out.text += b.text;
    if (b.type === "thinking") out.thinking += b.thinking;
    if (b.type === "tool_use") out.calls.push({ name: b.name, input: b.input });
  }
  return out;
}

async function chat(model) {
  const client = new OpenAI(opts);
  const stream = client.chat.completions.stream({
    model, messages: [{ role: "user", content: "go" }], stream_options: { include_usage: true },
    tools: tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.schema } })),
  });
  const c = await stream.finalChatCompletion();
  const m = c.choices[0].message;
  return {
    ok: true, text: m.content || "", thinking: m.reasoning_content || m.reasoning || "",
    calls: (m.tool_calls || []).map((tc) => ({ name: tc.function.name, input: JSON.parse(tc.function.arguments) })),
    stop: c.choices[0].finish_reason, usage: c.usage ? c.usage.completion_tokens : null,
  };
}

async function responses(model) {
  const client = new OpenAI(opts);
  const stream = client.responses.stream({
    model, input: "go",
    tools: tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.schema, strict: false })),
  });
  const r = await stream.finalResponse();
  const out = { ok: true, text: r.output_text || "", thinking: "", calls: [], stop: r.status, usage: r.usage ? r.usage.output_tokens : null };
  for (const it of r.output) {
    if (it.type === "reasoning") out.thinking += it.summary.map((s) => s.text).join("");
    if (it.type === "function_call") out.calls.push({ name: it.name, input: JSON.parse(it.arguments) });
  }
  return out;
}

const readers = { anthropic, chat, responses };

async function main() {
  for (const model of models) {
    let out;
    try {
      out = await readers[format](model);
    } catch (err) {
      // openai's ResponseStream rejects with the Responses "error" event itself.
      const known = err instanceof Anthropic.AnthropicError || err instanceof OpenAI.OpenAIError ||
        (err && err.type === "error" && typeof err.message === "string");
      out = known ? { ok: false, status: err.status ?? null, error: String(err.message) }
        : { crash: String((err && err.stack) || err) };
    }
    console.log(JSON.stringify({ model, ...out }));
  }
}

main();
