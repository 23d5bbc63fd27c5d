#!/usr/bin/env node
// Load on any OpenAI-compatible server (Switchyard's, llama.cpp's llama-server, vLLM): CLIENTS
// clients each send streamed /v1/completions back to back for DURATION seconds, with prompts of
// PROMPT_MIN..PROMPT_MAX words (deterministic from SEED), half of them opening with one shared
// prefix of PREFIX words, and MAX_TOKENS tokens per answer (ignore_eos). A word is about 6
// tokens under mkmodel's vocabulary (1.3 under a real one): the defaults give prompts of about
// 300 to 1500 tokens there, and the usage the server reports is averaged. Prints one JSON line:
// completed requests, output tokens/s over the window, TTFT and end-to-end p50 / p99 (seconds).
// Requests still running when the window closes are aborted and not counted.
//
//   node scripts/openai-load.mjs URL [CLIENTS] [DURATION]
//   env: MODEL (default: the first of /v1/models), MAX_TOKENS=128, PROMPT_MIN=50,
//        PROMPT_MAX=200, PREFIX=50, SEED=1
const [url, clientsArg, durationArg] = process.argv.slice(2);
if (!url) {
  console.error("usage: node scripts/openai-load.mjs URL [CLIENTS] [DURATION]");
  process.exit(2);
}
const clients = Number(clientsArg ?? 4), duration = Number(durationArg ?? 60);
const env = (k, d) => Number(process.env[k] ?? d);
const maxTokens = env("MAX_TOKENS", 128), promptMin = env("PROMPT_MIN", 50);
const promptMax = env("PROMPT_MAX", 200), prefixWords = env("PREFIX", 50);
let seed = env("SEED", 1) >>> 0 || 1;
const rand = () => {  // xorshift32: the same prompts for every server
  seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
};
const words = ("the of and to in is it you that he was for on are as with his they at be this " +
  "have from or one had by word but not what all were we when your can said there use an each " +
  "which she do how their if will up other about out many then them these so some her would " +
  "make like him into time has look two more write go see number no way could people my than " +
  "first water been call who oil its now find long down day did get come made may part over " +
  "new sound take only little work know place year live me back give most very after thing our " +
  "just name good sentence man think say great where help through much before line right too " +
  "mean old any same tell boy follow came want show also around form three small set put end " +
  "does another well large must big even such because turn here why ask went men read need land")
  .split(" ");
const text = (n) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(" ");
const prefix = text(prefixWords);

async function modelName() {
  if (process.env.MODEL) return process.env.MODEL;
  const r = await fetch(`${url}/v1/models`);
  return (await r.json()).data[0].id;
}

// One streamed completion: TTFT (first text), end-to-end seconds and the tokens it produced.
async function request(model, prompt, signal) {
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/completions`, {
    method: "POST", signal,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model, prompt, max_tokens: maxTokens, temperature: 0, stream: true,
                           ignore_eos: true, stream_options: { include_usage: true } }),
  });
  if (!r.ok) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  let ttft = null, chunks = 0, usage = null, buf = "";
  const decoder = new TextDecoder();
  for await (const part of r.body) {
    buf += decoder.decode(part, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      const msg = JSON.parse(data);
      if (msg.usage) usage = msg.usage;
      const t = msg.choices?.[0]?.text;
      if (t) {
        if (ttft === null) ttft = (performance.now() - t0) / 1000;
        ++chunks;
      }
    }
  }
  return { ttft, e2e: (performance.now() - t0) / 1000,
           tokens: usage?.completion_tokens ?? chunks, prompt: usage?.prompt_tokens ?? null };
}

const pct = (v, p) => {
  if (!v.length) return null;
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

const model = await modelName();
await request(model, "warm up", undefined);  // first-request costs (pages, primitives): not counted
const done = [];
const stop = new AbortController();
const end = performance.now() + duration * 1000;
const prompts = () => (rand() < 0.5 ? prefix + " " : "") +
  text(promptMin + Math.floor(rand() * (promptMax - promptMin + 1)));
setTimeout(() => stop.abort(), duration * 1000);
await Promise.all(Array.from({ length: clients }, async () => {
  while (performance.now() < end) {
    try {
      done.push(await request(model, prompts(), stop.signal));
    } catch (e) {
      if (e.name === "AbortError") return;
      throw e;
    }
  }
}));
const ttft = done.map((d) => d.ttft).filter((t) => t !== null), e2e = done.map((d) => d.e2e);
const promptTokens = done.map((d) => d.prompt).filter((p) => p !== null);
console.log(JSON.stringify({
  url, model, clients, duration, completed: done.length,
  output_tok_s: done.reduce((a, d) => a + d.tokens, 0) / duration,
  ttft_p50: pct(ttft, 0.5), ttft_p99: pct(ttft, 0.99), e2e_p50: pct(e2e, 0.5),
  e2e_p99: pct(e2e, 0.99),
  prompt_tokens_mean: promptTokens.length ? promptTokens.reduce((a, b) => a + b, 0) / promptTokens.length : null,
}));
