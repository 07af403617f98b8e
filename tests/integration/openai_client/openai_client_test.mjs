// The official openai npm package against `sluice serve` on stories260K: list models, chat and
// text completions streamed and not, n = 2, seeded reproducibility equal to `sluice generate` on
// the same row, abort by closing a stream, usage counts, an API key required and refused; and a
// second server whose chat template opens a <think> block (as DeepSeek-R1's does) with a reasoning
// budget: the answer's reasoning under reasoning_content and reasoning, streamed as its own deltas.
// Usage: node openai_client_test.mjs SLUICE MODEL WORK_DIR
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { writeFileSync, readFileSync } from "node:fs";
import assert from "node:assert/strict";
import OpenAI from "openai";

const [sluice, modelPath, workDir] = process.argv.slice(2);
const apiKey = "test-key";

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startServer(port, extraArgs = []) {
  const server = spawn(sluice, ["serve", "--model", modelPath, "--port", String(port), "--served-model-name",
                                "stories", "--api-key", apiKey, "--threads", "2", ...extraArgs],
                       { stdio: ["ignore", "ignore", "inherit"] });
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`sluice serve exited with ${server.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return server;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("sluice serve did not answer /health within a minute");
}

async function metrics(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = {};
  for (const m of text.matchAll(/^sluice:(\w+)\{model_name="stories"\} (\S+)$/gm)) out[m[1]] = Number(m[2]);
  return out;
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });

const port = await freePort();
const server = await startServer(port);
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey, maxRetries: 0 });

test("lists the model", async () => {
  const models = await client.models.list();
  assert.deepEqual(models.data.map((m) => m.id), ["stories"]);
});

test("text completion, whole and streamed, with usage", async () => {
  const whole = await client.completions.create({ model: "stories", prompt: "Once upon a time", max_tokens: 24 });
  assert.equal(whole.object, "text_completion");
  assert.equal(whole.choices[0].finish_reason, "length");
  assert.deepEqual(whole.usage, { prompt_tokens: 5, completion_tokens: 24, total_tokens: 29 });
  const stream = await client.completions.create({ model: "stories", prompt: "Once upon a time", max_tokens: 24,
                                                   stream: true, stream_options: { include_usage: true } });
  let text = "";
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.choices.length > 0) text += chunk.choices[0].text;
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, whole.choices[0].text);
  assert.deepEqual(usage, whole.usage);
});

test("chat, n = 2 and a seed: reproducible and equal to sluice generate on the same row", async () => {
  const messages = [{ role: "user", content: "Tell me a story" }];
  const ask = () => client.chat.completions.create({ model: "stories", messages, temperature: 0.8, seed: 11,
                                                     max_tokens: 30, n: 2 });
  const first = await ask();
  const again = await ask();
  assert.equal(first.choices.length, 2);
  assert.deepEqual(first.choices.map((c) => c.message.content), again.choices.map((c) => c.message.content));
  assert.notEqual(first.choices[0].message.content, first.choices[1].message.content);
  writeFileSync(`${workDir}/input.jsonl`, JSON.stringify({ messages }) + "\n");
  execFileSync(sluice, ["generate", "--model", modelPath, "--input", `${workDir}/input.jsonl`, "--output",
                        `${workDir}/out.jsonl`, "--temperature", "0.8", "--seed", "11", "--max-tokens", "30",
                        "--n", "2", "--quiet"]);
  const row = JSON.parse(readFileSync(`${workDir}/out.jsonl`, "utf8").trim());
  assert.deepEqual(first.choices.map((c) => c.message.content), row.samples.map((s) => s.output));
  assert.equal(first.usage.prompt_tokens, row.prompt_tokens);
  assert.equal(first.usage.completion_tokens, row.samples.reduce((n, s) => n + s.output_tokens, 0));
  assert.equal(first.usage.total_tokens, first.usage.prompt_tokens + first.usage.completion_tokens);
});

test("chat streamed equals chat whole", async () => {
  const messages = [{ role: "user", content: "Hi" }];
  const whole = await client.chat.completions.create({ model: "stories", messages, max_tokens: 20 });
  const stream = await client.chat.completions.create({ model: "stories", messages, max_tokens: 20, stream: true });
  let text = "";
  let role = null;
  let finish = null;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    role ??= c.delta.role ?? null;
    text += c.delta.content ?? "";
    finish = c.finish_reason ?? finish;
  }
  assert.equal(role, "assistant");
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, whole.choices[0].finish_reason);
});

test("chat logprobs: one entry per token with its top alternatives, greedy picks the likeliest", async () => {
  const messages = [{ role: "user", content: "Hi" }];
  const r = await client.chat.completions.create({ model: "stories", messages, max_tokens: 10,
                                                   logprobs: true, top_logprobs: 2 });
  const content = r.choices[0].logprobs.content;
  assert.equal(content.length, r.usage.completion_tokens);
  for (const entry of content) {
    assert.ok(entry.logprob <= 0);
    assert.equal(entry.top_logprobs.length, 2);
    assert.equal(entry.top_logprobs[0].token, entry.token);
    assert.equal(entry.top_logprobs[0].logprob, entry.logprob);
    assert.ok(entry.top_logprobs[1].logprob <= entry.logprob);
  }
  assert.equal(Buffer.from(content.flatMap((e) => e.bytes)).toString("utf8"), r.choices[0].message.content);
});

test("closing a stream aborts the request and frees its blocks", async () => {
  const before = (await metrics(port)).request_aborted_total;
  const stream = await client.completions.create({ model: "stories", prompt: "Once", n: 64, max_tokens: 100000,
                                                   ignore_eos: true, stream: true });
  let n = 0;
  for await (const _ of stream) {
    if (++n === 3) break;  // leaving the loop aborts the HTTP request
  }
  const deadline = Date.now() + 20000;
  let m;
  do {
    await new Promise((r) => setTimeout(r, 20));
    m = await metrics(port);
  } while ((m.num_requests_running !== 0 || m.kv_cache_blocks_used !== 0 || m.request_aborted_total < before + 1) &&
           Date.now() < deadline);
  assert.equal(m.num_requests_running, 0);
  assert.equal(m.kv_cache_blocks_used, 0);
  assert.equal(m.request_aborted_total, before + 1);
});

// A DeepSeek-R1-style template: the generation prompt ends inside "<think>\n", so every output
// starts in the reasoning; --reasoning-budget 4 has the engine close it after 4 tokens ("\n</think>\n\n")
// and the answer follows.
const thinkTemplate = `{%- for message in messages %}{{ message['role'] }}: {{ message['content'] }}
{% endfor %}{%- if add_generation_prompt %}assistant: <think>
{% endif %}`;

test("a thinking template: reasoning under reasoning_content and reasoning, streamed as its own deltas", async () => {
  writeFileSync(`${workDir}/think.jinja`, thinkTemplate);
  const thinkPort = await freePort();
  const thinking = await startServer(thinkPort, ["--chat-template", `${workDir}/think.jinja`, "--reasoning-budget", "4"]);
  try {
    const c = new OpenAI({ baseURL: `http://127.0.0.1:${thinkPort}/v1`, apiKey, maxRetries: 0 });
    const ask = { model: "stories", messages: [{ role: "user", content: "Tell me a story" }], max_tokens: 24,
                  temperature: 0 };
    const whole = await c.chat.completions.create(ask);
    const message = whole.choices[0].message;
    assert.ok(typeof message.reasoning_content === "string" && message.reasoning_content.length > 0,
              JSON.stringify(message));
    assert.ok(message.content.length > 0, JSON.stringify(message));
    assert.ok(!message.content.includes("</think>"), JSON.stringify(message));
    const reasoningTokens = whole.usage.completion_tokens_details.reasoning_tokens;
    assert.ok(reasoningTokens > 0 && reasoningTokens < whole.usage.completion_tokens, JSON.stringify(whole.usage));
    // The raw body has vLLM's name too.
    const raw = await (await c.chat.completions.create(ask).asResponse()).json();
    assert.equal(raw.choices[0].message.reasoning, message.reasoning_content);
    assert.equal(raw.choices[0].message.reasoning_content, message.reasoning_content);

    const stream = await c.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    let reasoning = "", reasoningAgain = "", content = "", usage = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices.length === 0) continue;
      const delta = chunk.choices[0].delta;
      assert.ok(!(delta.reasoning_content !== undefined && delta.content !== undefined), JSON.stringify(delta));
      if (delta.content !== undefined && chunk.choices[0].finish_reason === null) assert.notEqual(delta.content, "");
      reasoning += delta.reasoning_content ?? "";
      reasoningAgain += delta.reasoning ?? "";
      content += delta.content ?? "";
    }
    assert.equal(reasoning, message.reasoning_content);
    assert.equal(reasoningAgain, message.reasoning_content);
    assert.equal(content, message.content);
    assert.deepEqual(usage, whole.usage);

    // enable_thinking false closes the block the template opened: no reasoning, and no keys for it.
    const off = await c.chat.completions.create({ ...ask, chat_template_kwargs: { enable_thinking: false } });
    assert.equal(off.choices[0].message.reasoning_content, undefined, JSON.stringify(off.choices[0].message));
    assert.equal(off.choices[0].message.reasoning, undefined);
    assert.equal(off.usage.completion_tokens_details, undefined);
    assert.ok(off.choices[0].message.content.length > 0);
    await assert.rejects(c.chat.completions.create({ ...ask, reasoning_effort: "extreme" }),
                         (e) => e.status === 400 && e.param === "reasoning_effort");
  } finally {
    thinking.kill("SIGTERM");
  }
});

test("errors reach the client with their status and parameter", async () => {
  await assert.rejects(client.completions.create({ model: "stories", prompt: "x", n: 0 }),
                       (e) => e.status === 400 && e.param === "n");
  await assert.rejects(client.completions.create({ model: "gpt-4", prompt: "x" }),
                       (e) => e.status === 404 && e.code === "model_not_found");
  await assert.rejects(client.chat.completions.create({ model: "stories", messages: [{ role: "user", content: "x" }],
                                                        top_logprobs: 2 }),
                       (e) => e.status === 400 && e.param === "top_logprobs");
});

test("an API key is required and a wrong one refused", async () => {
  const wrong = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "nope", maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e.status === 401);
  const none = await fetch(`http://127.0.0.1:${port}/v1/models`);
  assert.equal(none.status, 401);
});

let failures = 0;
try {
  for (const { name, fn } of tests) {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      ++failures;
      console.log(`FAIL ${name}\n${e.stack ?? e}`);
    }
  }
} finally {
  server.kill("SIGTERM");
}
process.exit(failures === 0 ? 0 : 1);
