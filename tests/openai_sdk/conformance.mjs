// The official OpenAI Node SDK against `switchyard serve`: completions and chat, whole and
// streamed, with n, stop, seed, logprobs, penalties, logit_bias, response_format (json_schema
// through the SDK's parse helper), tool_choice required / named (streamed as argument deltas),
// reasoning_content (whole and as deltas), echo with logprobs and max_tokens 0,
// stream_options.include_usage, tools and tool results; every field the SDK reads is checked;
// fields the server does not honour come back as 400s naming them; a wrong key is the SDK's
// AuthenticationError.
// Usage: node conformance.mjs <base url, e.g. http://127.0.0.1:8000/v1> <api key>
import assert from "node:assert/strict";
import OpenAI from "openai";

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
const MODEL = "tiny";
let checks = 0;

async function check(name, fn) {
  try {
    await fn();
    ++checks;
    console.log(`ok   ${name}`);
  } catch (e) {
    console.error(`FAIL ${name}: ${e.stack ?? e}`);
    process.exitCode = 1;
  }
}

function usageOk(u, promptTokens, completionTokens) {
  assert.equal(typeof u.prompt_tokens, "number");
  assert.ok(u.prompt_tokens > 0);
  if (promptTokens !== undefined) assert.equal(u.prompt_tokens, promptTokens);
  if (completionTokens !== undefined) assert.equal(u.completion_tokens, completionTokens);
  assert.equal(u.total_tokens, u.prompt_tokens + u.completion_tokens);
}

function finishOk(r) {
  assert.ok(r === "stop" || r === "length", `finish_reason ${r}`);
}

// Expects the SDK's error for one refusal: its class, status and the field it names.
async function refused(promise, status, param, Kind = OpenAI.BadRequestError) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof Kind, `expected ${Kind.name}, got ${e.constructor.name}: ${e.message}`);
    assert.equal(e.status, status);
    if (param !== undefined) assert.equal(e.param, param);
    return e;
  }
  assert.fail(`accepted; expected ${status} naming ${param}`);
}

await check("models.list and models.retrieve", async () => {
  const list = await client.models.list();
  const ids = list.data.map((m) => m.id);
  assert.ok(ids.includes(MODEL), ids.join(","));
  const m = await client.models.retrieve(MODEL);
  assert.equal(m.id, MODEL);
  assert.equal(m.object, "model");
  assert.equal(typeof m.created, "number");
  assert.equal(m.owned_by, "switchyard");
  await refused(client.models.retrieve("no-such-model"), 404, "model", OpenAI.NotFoundError);
});

await check("completions: n, seed, logprobs, usage, fingerprint", async () => {
  const req = { model: MODEL, prompt: "The switchyard", max_tokens: 6, n: 2, seed: 7,
                temperature: 1, logprobs: 2, ignore_eos: true };
  const a = await client.completions.create(req);
  assert.equal(a.object, "text_completion");
  assert.match(a.id, /^cmpl-/);
  assert.equal(typeof a.created, "number");
  assert.equal(a.model, MODEL);
  assert.match(a.system_fingerprint, /^fp_/);
  assert.equal(a.choices.length, 2);
  a.choices.forEach((c, i) => {
    assert.equal(c.index, i);
    assert.equal(typeof c.text, "string");
    finishOk(c.finish_reason);
    assert.equal(c.finish_reason, "length");
    assert.equal(c.logprobs.tokens.length, 6);
    assert.equal(c.logprobs.token_logprobs.length, 6);
    assert.equal(c.logprobs.top_logprobs.length, 6);
    assert.equal(c.logprobs.text_offset.length, 6);
    for (const lp of c.logprobs.token_logprobs) assert.ok(lp <= 0);
  });
  usageOk(a.usage, undefined, 12);
  // The same seed gives the same choices.
  const b = await client.completions.create(req);
  assert.deepEqual(b.choices.map((c) => c.text), a.choices.map((c) => c.text));
});

await check("completions: stop strings, echo, penalties, logit_bias", async () => {
  const base = { model: MODEL, prompt: "stop here", max_tokens: 24, temperature: 0,
                 ignore_eos: true };
  const whole = await client.completions.create(base);
  const text = whole.choices[0].text;
  // A stop string from the middle of the greedy text: the answer ends right before it.
  const ascii = [...text].findIndex((ch, i) => i > 0 && /[!-~]/.test(ch) && !text.slice(0, i).includes(ch));
  assert.ok(ascii > 0, "the greedy text has no fresh printable character to stop at");
  {
    const stopped = await client.completions.create({ ...base, stop: ["\u0001never", text[ascii]] });
    assert.equal(stopped.choices[0].finish_reason, "stop");
    assert.equal(stopped.choices[0].text, text.slice(0, ascii));
  }
  const echo = await client.completions.create({ ...base, max_tokens: 3, echo: true });
  assert.ok(echo.choices[0].text.startsWith("stop here"));
  const biased = await client.completions.create({ ...base, max_tokens: 4, logit_bias: { "68": 100 } });  // byte "A" of the byte-level vocab
  assert.equal(biased.choices[0].text, "AAAA");
  const pen = await client.completions.create({ ...base, presence_penalty: 1.5, frequency_penalty: 1.5 });
  assert.equal(pen.choices.length, 1);
  usageOk(pen.usage, whole.usage.prompt_tokens, 24);
});

await check("completions stream: chunks, include_usage, [DONE]", async () => {
  const stream = await client.completions.create({
    model: MODEL, prompt: "stream", max_tokens: 5, temperature: 0, ignore_eos: true, stream: true,
    stream_options: { include_usage: true }, n: 2,
  });
  const text = ["", ""];
  let usage = null, finishes = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, "text_completion");
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text[c.index] += c.text;
      if (c.finish_reason) {
        finishOk(c.finish_reason);
        ++finishes;
      }
    }
  }
  assert.equal(finishes, 2);
  assert.ok(usage, "no usage chunk");
  usageOk(usage, undefined, 10);
  assert.equal(text[0], text[1]);  // greedy: both choices alike
  const whole = await client.completions.create({ model: MODEL, prompt: "stream", max_tokens: 5,
                                                  temperature: 0, ignore_eos: true });
  assert.equal(text[0], whole.choices[0].text);
});

await check("chat: message, logprobs, response_format text, max_completion_tokens", async () => {
  const r = await client.chat.completions.create({
    model: MODEL, messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }],
    max_tokens: 9, max_completion_tokens: 4, temperature: 0, logprobs: true, top_logprobs: 2,
    response_format: { type: "text" }, ignore_eos: true,
  });
  assert.equal(r.object, "chat.completion");
  assert.match(r.id, /^chatcmpl-/);
  assert.match(r.system_fingerprint, /^fp_/);
  const c = r.choices[0];
  assert.equal(c.message.role, "assistant");
  assert.equal(typeof c.message.content, "string");
  assert.equal(c.finish_reason, "length");
  assert.equal(c.logprobs.content.length, 4);
  for (const e of c.logprobs.content) {
    assert.equal(e.top_logprobs.length, 2);
    assert.ok(Array.isArray(e.bytes));
    assert.equal(e.logprob, e.top_logprobs[0].logprob);  // greedy
  }
  assert.equal(c.logprobs.refusal, null);
  usageOk(r.usage, undefined, 4);
});

await check("chat stream: role first, deltas, finish, usage", async () => {
  const stream = await client.chat.completions.create({
    model: MODEL, messages: [{ role: "user", content: "tell me" }], max_tokens: 5, temperature: 0,
    stream: true, stream_options: { include_usage: true }, stop: ["\u0001"], seed: 3,
    ignore_eos: true,
  });
  let first = true, content = "", finish = null, usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (first) {
        assert.equal(c.delta.role, "assistant");
        first = false;
      }
      content += c.delta.content ?? "";
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  finishOk(finish);
  usageOk(usage);
  const whole = await client.chat.completions.create({
    model: MODEL, messages: [{ role: "user", content: "tell me" }], max_tokens: 5, temperature: 0,
    stop: ["\u0001"], seed: 3, ignore_eos: true,
  });
  assert.equal(content, whole.choices[0].message.content);
});

await check("chat: helpers of the SDK (stream().finalChatCompletion)", async () => {
  const runner = client.chat.completions.stream({
    model: MODEL, messages: [{ role: "user", content: "final" }], max_tokens: 3, temperature: 0,
    ignore_eos: true,
  });
  const done = await runner.finalChatCompletion();
  assert.equal(done.choices[0].message.role, "assistant");
  finishOk(done.choices[0].finish_reason);
});

await check("chat: tools offered, a tool call and its result in the history", async () => {
  const tools = [{ type: "function",
    function: { name: "get_weather", description: "weather", parameters: { type: "object",
      properties: { city: { type: "string" } }, required: ["city"] } } }];
  const messages = [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function",
      function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) } }] },
    { role: "tool", tool_call_id: "call_1", content: "22 C" },
  ];
  const r = await client.chat.completions.create({ model: MODEL, messages, tools,
    tool_choice: "auto", parallel_tool_calls: false, max_tokens: 3, temperature: 0 });
  assert.equal(r.choices[0].message.role, "assistant");
  finishOk(r.choices[0].finish_reason);
  const stream = await client.chat.completions.create({ model: MODEL, messages, tools,
    max_tokens: 3, temperature: 0, stream: true });
  let chunks = 0;
  for await (const c of stream) chunks += c.choices.length;
  assert.ok(chunks > 0);
});

await check("chat: tool_choice required and a named function, streamed and not", async () => {
  const tools = [
    { type: "function", function: { name: "get_weather", parameters: { type: "object",
      additionalProperties: false, required: ["city"],
      properties: { city: { enum: ["Paris", "Oslo"] } } } } },
    { type: "function", function: { name: "get_time", parameters: { type: "object",
      additionalProperties: false, required: ["zone"], properties: { zone: { enum: ["UTC"] } } } } },
  ];
  const base = { model: MODEL, messages: [{ role: "user", content: "Weather?" }], tools,
    max_tokens: 200, temperature: 0, parallel_tool_calls: false };
  const r = await client.chat.completions.create({ ...base, tool_choice: "required" });
  assert.equal(r.choices[0].finish_reason, "tool_calls");
  const call = r.choices[0].message.tool_calls[0];
  assert.equal(call.type, "function");
  assert.ok(call.id.startsWith("call_"));
  const args = JSON.parse(call.function.arguments);
  assert.ok(["get_weather", "get_time"].includes(call.function.name));
  assert.ok(args.city === "Paris" || args.city === "Oslo" || args.zone === "UTC", call.function.arguments);
  // Streamed: the call's name first, then its arguments in pieces, which the SDK's stream
  // helper puts together into the same call.
  const stream = client.chat.completions.stream({ ...base,
    tool_choice: { type: "function", function: { name: "get_time" } } });
  let pieces = 0;
  for await (const c of stream) {
    for (const t of c.choices[0]?.delta?.tool_calls ?? []) {
      assert.equal(t.index, 0);
      if (pieces++ === 0) assert.equal(t.function.name, "get_time");
      else assert.equal(t.id, undefined);
    }
  }
  assert.ok(pieces > 2, `${pieces} tool_calls deltas`);
  const done = await stream.finalChatCompletion();
  assert.equal(done.choices[0].finish_reason, "tool_calls");
  const streamed = done.choices[0].message.tool_calls[0];
  assert.equal(streamed.function.name, "get_time");
  assert.deepEqual(JSON.parse(streamed.function.arguments), { zone: "UTC" });
});

await check("chat: reasoning_content whole and as its own deltas (enable_thinking)", async () => {
  // The prompt ends inside an open <think>: the answer is reasoning until </think>, which this
  // random-weight model never writes.
  const base = { model: MODEL, messages: [{ role: "user", content: "think" }], max_tokens: 8,
    temperature: 0, ignore_eos: true, chat_template_kwargs: { enable_thinking: true } };
  const whole = await client.chat.completions.create(base);
  const m = whole.choices[0].message;
  assert.equal(typeof m.reasoning_content, "string");
  assert.ok(m.reasoning_content.length > 0);
  assert.equal(m.content, "");
  let reasoning = "", content = "";
  for await (const c of await client.chat.completions.create({ ...base, stream: true })) {
    const d = c.choices[0]?.delta ?? {};
    reasoning += d.reasoning_content ?? "";
    content += d.content ?? "";
  }
  assert.equal(reasoning, m.reasoning_content);
  assert.equal(content, "");
  // Without it, the empty think block is the prompt's: the answer is content.
  const plain = await client.chat.completions.create({ ...base, chat_template_kwargs: {} });
  assert.equal(plain.choices[0].message.reasoning_content, undefined);
  assert.ok(plain.choices[0].message.content.length > 0);
});

await check("completions: echo with logprobs and max_tokens 0 (lm-eval's loglikelihood)", async () => {
  const r = await client.completions.create({ model: MODEL, prompt: "stop here", max_tokens: 0,
    echo: true, logprobs: 1, temperature: 0 });
  const c = r.choices[0];
  assert.equal(c.text, "stop here");
  assert.equal(c.finish_reason, "length");
  const lp = c.logprobs;
  assert.equal(lp.tokens.length, r.usage.prompt_tokens);  // every prompt token, scored
  assert.equal(lp.token_logprobs[0], null);  // the first token has nothing before it
  assert.equal(lp.token_logprobs.length, lp.tokens.length);
  for (const x of lp.token_logprobs.slice(1)) assert.ok(x <= 0);
  assert.equal(r.usage.completion_tokens, 0);
});

await check("chat: json_schema output through the SDK's parse helper", async () => {
  const schema = { type: "object", additionalProperties: false, required: ["score", "answer"],
    properties: { score: { type: "integer" }, answer: { enum: ["yes", "no"] } } };
  const r = await client.chat.completions.parse({ model: MODEL,
    messages: [{ role: "user", content: "ok?" }], max_tokens: 100, temperature: 0,
    response_format: { type: "json_schema", json_schema: { name: "verdict", strict: true, schema } },
  });
  assert.equal(r.choices[0].finish_reason, "stop");
  const p = r.choices[0].message.parsed;
  assert.deepEqual(Object.keys(p), ["score", "answer"]);  // the schema's order
  assert.ok(p.answer === "yes" || p.answer === "no", JSON.stringify(p));
  assert.ok(Number.isInteger(p.score), JSON.stringify(p));
  const o = await client.chat.completions.create({ model: MODEL, max_tokens: 100,
    messages: [{ role: "user", content: "json" }], response_format: { type: "json_object" },
    temperature: 0.8, seed: 3 });
  assert.equal(o.choices[0].message.content[0], "{");
});

await check("refusals: 400 naming the field, 401 for a wrong key", async () => {
  const msg = [{ role: "user", content: "x" }];
  await refused(client.chat.completions.create({ model: MODEL, messages: msg,
    tools: [{ type: "function", function: { name: "f", parameters: {} } }],
    tool_choice: { type: "function", function: { name: "g" } } }), 400, "tool_choice");
  await refused(client.chat.completions.create({ model: MODEL, messages: msg,
    response_format: { type: "json_schema", json_schema: { name: "x",
      schema: { type: "string", pattern: "^a+$" } } } }), 400, "response_format.json_schema.schema");
  await refused(client.completions.create({ model: MODEL, prompt: "x", grammar: "root ::= y" }),
    400, "grammar");
  await refused(client.chat.completions.create({ model: MODEL, messages: msg,
    audio: { voice: "alloy", format: "wav" }, modalities: ["text", "audio"] }), 400, "audio");
  await refused(client.chat.completions.create({ model: MODEL, messages: msg, store: true }),
    400, "store");
  await refused(client.completions.create({ model: MODEL, prompt: "x", suffix: "y" }), 400, "suffix");
  await refused(client.completions.create({ model: MODEL, prompt: "x", best_of: 2 }), 400, "best_of");
  await refused(client.completions.create({ model: MODEL, prompt: "x", frobnicate: 1 }), 400, "frobnicate");
  const wrong = new OpenAI({ baseURL, apiKey: "wrong", maxRetries: 0 });
  const e = await refused(wrong.models.list(), 401, undefined, OpenAI.AuthenticationError);
  assert.equal(e.code, "invalid_api_key");
  await refused(client.completions.create({ model: "gpt-4o", prompt: "x" }), 404, "model",
    OpenAI.NotFoundError);
});

console.log(`${checks} checks passed${process.exitCode ? ", some FAILED" : ""}`);
