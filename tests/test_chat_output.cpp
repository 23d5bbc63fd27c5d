// A chat answer read as its template's family writes it: reasoning in <think> or gpt-oss's
// analysis channel, tool calls in <tool_call> (Hermes), after [TOOL_CALLS] (Mistral), as the
// whole answer (Llama 3), between DeepSeek's markers or in gpt-oss messages to functions, content
// around them, the same however the text is cut into streamed pieces, arguments streamed as they
// arrive; and the OpenAI message and delta shapes that carry them.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "grammar/matcher.h"
#include "grammar/token_trie.h"
#include "server/api_error.h"
#include "server/chat_output.h"
#include "server/choice_text.h"
#include "server/openai_response.h"
#include "server/output_grammar.h"
#include "text/tokenizer.h"

namespace sy::server {
namespace {

using nlohmann::json;

struct Read {
  std::string content, reasoning;
  std::vector<ToolCall> calls;
};

// The answer fed `piece` bytes at a time, then finished: its call pieces as they came.
Read read_pieces(const OutputSyntax& s, const std::string& text, size_t piece) {
  ChatOutput out(s, "call_x_0_");
  Read r;
  auto take = [&](ChatOutput::Delta d) {
    r.content += d.content;
    r.reasoning += d.reasoning;
    for (auto& c : d.calls) r.calls.push_back(c);
  };
  for (size_t i = 0; i < text.size(); i += piece) take(out.feed(text.substr(i, piece)));
  take(out.finish());
  return r;
}

// The same, its call pieces merged into whole calls as a client's stream reader merges them.
Read read(const OutputSyntax& s, const std::string& text, size_t piece) {
  Read r = read_pieces(s, text, piece);
  std::vector<ToolCall> pieces = std::move(r.calls);
  r.calls.clear();
  merge_calls(r.calls, std::move(pieces));
  return r;
}

const OutputSyntax kQwen3{true, false, CallSyntax::hermes};

// Read in pieces of 1, 3, 7 bytes and whole, the answer gives this reasoning, content and calls
// (name, arguments), numbered in order.
void expect_read(const OutputSyntax& s, const std::string& text, const std::string& reasoning,
                 const std::string& content,
                 const std::vector<std::pair<std::string, std::string>>& calls) {
  for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, text.size()}) {
    SCOPED_TRACE(piece);
    const Read r = read(s, text, piece);
    EXPECT_EQ(r.reasoning, reasoning);
    EXPECT_EQ(r.content, content);
    ASSERT_EQ(r.calls.size(), calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(r.calls[i].index, i);
      EXPECT_EQ(r.calls[i].id, "call_x_0_" + std::to_string(i));
      EXPECT_EQ(r.calls[i].name, calls[i].first);
      EXPECT_EQ(r.calls[i].arguments, calls[i].second);
    }
  }
}

TEST(ChatOutput, SplitsReasoningToolCallsAndContentWhateverThePieces) {
  const std::string answer =
      "<think>\nThe user wants weather.\n</think>\n\nLet me check.\n<tool_call>\n"
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  expect_read(kQwen3, answer, "\nThe user wants weather.\n", "Let me check.\n",
              {{"get_weather", R"({"city":"Paris","unit":"celsius"})"},  // the model's order
               {"get_time", "{}"}});
}

TEST(ChatOutput, WhatIsNotACallStaysText) {
  // Not JSON, no name, never closed: the model's own words, tags and all.
  EXPECT_EQ(read(kQwen3, "a<tool_call>not json</tool_call>b", 1).content,
            "a<tool_call>not json</tool_call>b");
  EXPECT_EQ(read(kQwen3, "<tool_call>{\"arguments\": {}}</tool_call>", 4).calls.size(), 0u);
  const Read open = read(kQwen3, "x<tool_call>{\"name\": \"f\"", 3);
  EXPECT_EQ(open.content, "x<tool_call>{\"name\": \"f\"");
  EXPECT_TRUE(open.calls.empty());
  // A tail that only looks like the start of a tag is content once the text ends.
  EXPECT_EQ(read(kQwen3, "1 <tool_ca", 1).content, "1 <tool_ca");
  EXPECT_EQ(read(kQwen3, "1 <thi", 2).content, "1 <thi");
}

TEST(ChatOutput, FollowsTheSyntaxItIsGiven) {
  const std::string answer = "<think>r</think>c<tool_call>{\"name\": \"f\"}</tool_call>";
  // No tools offered (or tool_choice none): the call is text.
  Read r = read({true, false, CallSyntax::none}, answer, 1);
  EXPECT_EQ(r.reasoning, "r");
  EXPECT_EQ(r.content, "c<tool_call>{\"name\": \"f\"}</tool_call>");
  // A template that does not think: <think> is text too.
  r = read({false, false, CallSyntax::none}, answer, 5);
  EXPECT_EQ(r.content, answer);
  EXPECT_EQ(r.reasoning, "");
  // The prompt opened the think block (DeepSeek-R1's generation prompt): the answer starts in it.
  r = read({true, true, CallSyntax::none}, "still thinking</think>\nanswer", 2);
  EXPECT_EQ(r.reasoning, "still thinking");
  EXPECT_EQ(r.content, "answer");
}

TEST(ChatOutput, SyntaxComesFromTheTemplateAndThePrompt) {
  const std::string qwen3 = "...<tool_call>...</think>...";
  EXPECT_EQ(output_syntax(qwen3, "<|im_start|>assistant\n", true).calls, CallSyntax::hermes);
  EXPECT_EQ(output_syntax(qwen3, "<|im_start|>assistant\n", false).calls, CallSyntax::none);
  EXPECT_FALSE(output_syntax(qwen3, "<|im_start|>assistant\n", true).opens_in_think);
  EXPECT_TRUE(output_syntax(qwen3, "<|Assistant|><think>\n", false).opens_in_think);
  EXPECT_FALSE(output_syntax("{{ messages }}", "<think>\n", true).think);
}

TEST(ChatOutput, MistralCallsRunToTheEnd) {
  const OutputSyntax mistral{false, false, CallSyntax::mistral};
  // Nemo: a JSON list after [TOOL_CALLS].
  expect_read(mistral, "Checking.[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]", "",
              "Checking.", {{"f", "{}"}});
  Read r = read(mistral,
                "Checking.[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}}, "
                "{\"name\": \"g\", \"arguments\": {}}]",
                3);
  EXPECT_EQ(r.content, "Checking.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":1})");
  EXPECT_EQ(r.calls[1].name, "g");
  // Small 3.2, Devstral, Ministral 3: name[ARGS]{...} after each [TOOL_CALLS].
  r = read(mistral, "[TOOL_CALLS]f[ARGS]{\"a\": 1}[TOOL_CALLS]g[CALL_ID]x1[ARGS]{}", 1);
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0].name, "f");
  EXPECT_EQ(r.calls[1].name, "g");
  EXPECT_EQ(r.calls[1].index, 1u);
  // What is no call is the text it was; a call whose arguments opened is the model's call,
  // whatever its arguments turn out to be (OpenAI's `arguments` is the model's text).
  r = read(mistral, "a[TOOL_CALLS]f[ARGS]oops", 2);
  EXPECT_EQ(r.content, "a[TOOL_CALLS]f[ARGS]oops");
  EXPECT_TRUE(r.calls.empty());
  r = read(mistral, "a[TOOL_CALLS]f[ARGS]{oops", 2);
  EXPECT_EQ(r.content, "a");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{oops");
}

TEST(ChatOutput, MistralLlama3AndDeepSeekArgumentsStreamToo) {
  // Each call's first piece goes out before its arguments are complete.
  struct Case {
    OutputSyntax syntax;
    std::string head, args, tail;
  };
  const std::string ds = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>";
  for (const Case& c : {
           Case{{false, false, CallSyntax::mistral}, "[TOOL_CALLS]f[ARGS]", "{\"a\": [1, ", "2]}"},
           Case{{false, false, CallSyntax::mistral},
                "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": ",
                "{\"a\": [1, ",
                "2]}}]"},
           Case{{false, false, CallSyntax::llama3},
                "<|python_tag|>{\"name\": \"f\", \"parameters\": ",
                "{\"a\": [1, ",
                "2]}}"},
           Case{{false, false, CallSyntax::deepseek},
                ds + "f<｜tool▁sep｜>",
                "{\"a\": [1, ",
                "2]}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
           Case{{false, false, CallSyntax::deepseek, false, true},
                ds + "function<｜tool▁sep｜>f\n```json\n",
                "{\"a\": [1, ",
                "2]}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
       }) {
    SCOPED_TRACE(c.head);
    ChatOutput out(c.syntax, "call_x_0_");
    ChatOutput::Delta d = out.feed(c.head + c.args);
    ASSERT_EQ(d.calls.size(), 2u);
    EXPECT_EQ(d.calls[0].name, "f");
    EXPECT_EQ(d.calls[0].id, "call_x_0_0");
    EXPECT_EQ(d.calls[1].arguments, "{\"a\":[1,");
    d = out.feed(c.tail);
    ASSERT_EQ(d.calls.size(), 1u);
    EXPECT_EQ(d.calls[0].arguments, "2]}");
    EXPECT_TRUE(out.finish().empty());
    EXPECT_EQ(out.calls(), 1u);
  }
  // Several Mistral calls, listed or in pieces, byte by byte.
  for (const std::string text : {"[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}}, "
                                 "{\"name\": \"g\", \"arguments\": {}}]",
                                 "[TOOL_CALLS]f[ARGS]{\"a\": 1}[TOOL_CALLS]g[ARGS]{}"}) {
    const Read r = read(OutputSyntax{false, false, CallSyntax::mistral}, text, 1);
    ASSERT_EQ(r.calls.size(), 2u) << text;
    EXPECT_EQ(r.calls[0].arguments, R"({"a":1})");
    EXPECT_EQ(r.calls[1].name, "g");
    EXPECT_EQ(r.calls[1].arguments, "{}");
  }
}

TEST(ChatOutput, Llama3CallsAreTheWholeAnswer) {
  const OutputSyntax llama3{false, false, CallSyntax::llama3};
  Read r = read(llama3, " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", 2);
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris"})");
  r = read(llama3, "<|python_tag|>{\"name\": \"f\", \"parameters\": {}}", 1);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "f");
  // Words first: content, even if JSON follows; a JSON answer that is no call stays content.
  r = read(llama3, "Sure: {\"name\": \"f\", \"parameters\": {}}", 1);
  EXPECT_EQ(r.content, "Sure: {\"name\": \"f\", \"parameters\": {}}");
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(read(llama3, "{\"x\": 1}", 1).content, "{\"x\": 1}");
  const std::string tmpl = "<|python_tag|> ... \"parameters\": ";
  EXPECT_EQ(output_syntax(tmpl, "", true).calls, CallSyntax::llama3);
  EXPECT_EQ(output_syntax("[TOOL_CALLS]", "", true).calls, CallSyntax::mistral);
}

TEST(ChatOutput, HermesArgumentsStreamAsTheyArrive) {
  // The name and the opening brace make it a call: its first piece goes out before the arguments
  // are complete, then the arguments follow in pieces, compact.
  ChatOutput out(kQwen3, "call_x_0_");
  ChatOutput::Delta d = out.feed("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"ci");
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.calls[0].id, "call_x_0_0");
  EXPECT_EQ(d.calls[0].name, "get_weather");
  EXPECT_EQ(d.calls[0].arguments, "");
  EXPECT_EQ(d.calls[1].id, "");
  EXPECT_EQ(d.calls[1].arguments, "{\"ci");
  d = out.feed("ty\": \"Par is\",  \"n\": [1, 2]}");
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_EQ(d.calls[0].arguments, "ty\":\"Par is\",\"n\":[1,2]}");  // spaces in strings kept
  d = out.feed("}\n</tool_call>");
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(out.calls(), 1u);
  // Byte by byte, the pieces add up to the same call.
  const Read r = read_pieces(
      kQwen3, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"b\"}}</tool_call>", 1);
  EXPECT_GT(r.calls.size(), 3u);
  std::vector<ToolCall> whole;
  merge_calls(whole, std::vector<ToolCall>(r.calls));
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].arguments, R"({"a":"b"})");
  // Arguments written as a string are read whole at the close.
  const Read s = read(
      kQwen3, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>", 2);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0].arguments, "{\"a\": 1}");
}

TEST(ChatOutput, GptOssChannelsAreReasoningContentAndCalls) {
  const OutputSyntax plain =
      output_syntax("<|start|>{{ x }}<|channel|>", "<|start|>assistant", false);
  EXPECT_TRUE(plain.channels);
  EXPECT_FALSE(plain.think);
  EXPECT_EQ(plain.calls, CallSyntax::none);
  const OutputSyntax tools = output_syntax("<|channel|>", "", true);
  EXPECT_EQ(tools.calls, CallSyntax::harmony);
  // A message ends at <|end|> or, when the model leaves it out, at the next <|start|>.
  const std::string answer =
      "<|channel|>analysis<|message|>User asks weather. Use tool.<|start|>assistant<|channel|>"
      "commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}";
  expect_read(tools, answer, "User asks weather. Use tool.", "",
              {{"get_weather", R"({"city":"Paris"})"}});
  // The recipient before the channel, a final answer, and text without markup.
  Read r = read(tools,
                "<|channel|>analysis<|message|>a<|end|><|start|>assistant "
                "to=functions.f<|channel|>commentary json<|message|>{}",
                2);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "f");
  EXPECT_EQ(r.reasoning, "a");
  r = read(
      plain,
      "<|channel|>analysis<|message|>think<|start|>assistant<|channel|>final<|message|>Hi <b>!", 1);
  EXPECT_EQ(r.reasoning, "think");
  EXPECT_EQ(r.content, "Hi <b>!");
  EXPECT_EQ(read(plain, "just words <|x", 2).content, "just words <|x");
  // No tools offered: a message to a function is content.
  r = read(plain, "<|channel|>commentary to=functions.f<|message|>{}", 4);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, "{}");
}

// gpt-oss's markup as its file types it (CONTROL), through the tokenizer and the choice's
// detokenized text: the markup shows, <|end|> too (it closes a message, not the turn), and
// <|return|> and <|call|> end the turn.
TEST(ChatOutput, GptOssTokensReachTheReaderAsItExpects) {
  text::Vocab v;
  v.model = "gpt2";
  v.tokens = {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>",
              "analysis",  "final",       "think",       "Hi",      "assistant",  "<|endoftext|>"};
  v.types.assign(v.tokens.size(), text::TokenType::NORMAL);
  for (int32_t id : {0, 1, 2, 3, 4, 5, 11}) v.types[size_t(id)] = text::TokenType::CONTROL;
  v.merges = {"a s"};  // unused: every token here is whole
  v.bos = v.eos = 11;
  v.add_bos = false;
  const auto tok = text::Tokenizer::create(v);
  const auto& eog = tok->end_of_generation();
  EXPECT_TRUE(std::count(eog.begin(), eog.end(), 4) && std::count(eog.begin(), eog.end(), 5));
  EXPECT_FALSE(std::count(eog.begin(), eog.end(), 3));  // <|end|> closes a message, not the turn
  ChoiceText choice(*tok, {}, eog);
  std::string text;
  for (int32_t id : {1, 6, 2, 8, 3, 0, 10, 1, 7, 2, 9, 4}) text += choice.push(id);
  text += choice.finish();
  EXPECT_EQ(
      text,
      "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>Hi");
  const Read r = read(output_syntax("<|channel|>", "<|start|>assistant", false), text, 2);
  EXPECT_EQ(r.reasoning, "think");
  EXPECT_EQ(r.content, "Hi");
}

TEST(ChatOutput, DeepSeekCallsInBothForms) {
  const std::string r1_template =
      "split('</think>') <｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + name + "
      "'\n```json\n'";
  const OutputSyntax r1 = output_syntax(r1_template, "<｜Assistant｜><think>\n", true);
  EXPECT_EQ(r1.calls, CallSyntax::deepseek);
  EXPECT_TRUE(r1.fenced);
  EXPECT_TRUE(r1.opens_in_think);
  const std::string answer =
      "weighing</"
      "think>\n\nChecking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
      "get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>"
      "function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  expect_read(r1, answer, "weighing", "Checking.",
              {{"get_weather", R"({"city":"Paris"})"}, {"get_time", "{}"}});
  // V3.1: the name, then the arguments bare; a call cut off before its end marker still counts.
  const OutputSyntax v31 = output_syntax(
      "'<｜tool▁call▁begin｜>'+ tool['function']['name'] + '<｜tool▁sep｜>'", "", true);
  EXPECT_FALSE(v31.fenced);
  Read r = read(v31, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": 1}", 3);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, R"({"a":1})");
  // What is not a call is the text it was.
  r = read(v31,
           "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>oops<｜tool▁call▁end｜><"
           "｜tool▁calls▁end｜>",
           4);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, "<｜tool▁call▁begin｜>f<｜tool▁sep｜>oops<｜tool▁call▁end｜>");
}

// DeepSeek V3.2 writes DSML: each invoke is a call once whole, its parameters typed by
// string="true" (text as is) or "false" (JSON); a block that holds no invoke is text.
TEST(ChatOutput, DeepSeekV32DsmlCalls) {
  const std::string v32_template =
      "{%- set dsml_token = '\uFF5CDSML\uFF5C' -%}{{- '<' + dsml_token + 'function_calls>' -}}";
  const OutputSyntax s = output_syntax("{%- set dsml_token = '｜DSML｜' -%}...'</think>'...",
                                       "<｜Assistant｜><think>", true);
  EXPECT_EQ(s.calls, CallSyntax::dsml);
  EXPECT_TRUE(s.opens_in_think);
  EXPECT_EQ(output_syntax(v32_template, "", false).calls, CallSyntax::none);
  const std::string answer =
      "weighing</think>Let me check.\n\n<｜DSML｜function_calls>\n"
      "<｜DSML｜invoke name=\"get_weather\">\n"
      "<｜DSML｜parameter name=\"city\" string=\"true\">Oslo \"Norway\"</｜DSML｜parameter>\n"
      "<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n"
      "<｜DSML｜parameter name=\"units\" string=\"false\">[\"c\", \"f\"]</｜DSML｜parameter>\n"
      "</｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n"
      "</｜DSML｜function_calls>";
  expect_read(s, answer, "weighing", "Let me check.\n\n",
              {{"get_weather", R"({"city":"Oslo \"Norway\"","days":3,"units":["c","f"]})"},
               {"get_time", "{}"}});
  // Not an invoke: the block is text, tags and all; an unfinished invoke is no call.
  const std::string bad = "<｜DSML｜function_calls>\nhello</｜DSML｜function_calls> after";
  Read r = read(s, "</think>" + bad, 5);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, bad);
  r = read(s, "</think><｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜para", 3);
  EXPECT_TRUE(r.calls.empty());
  // A required call has no grammar for DSML yet: a 400 that says so.
  try {
    tool_call_grammar(s, nlohmann::ordered_json::array(), "", false);
    FAIL() << "a required DSML call was taken";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, "tool_choice");
    EXPECT_EQ(std::string(e.what()),
              "'tool_choice' 'required' or a named function is not supported for this model's "
              "calls (DeepSeek V3.2's DSML) yet; use 'auto'.");
  }
}

// The grammar of tool_choice "required" takes the family's call and nothing else.
bool takes(const std::shared_ptr<const grammar::Grammar>& g, const std::string& text) {
  grammar::Matcher m(g);
  const grammar::ByteState s = grammar::TokenTrie::feed(m, {m.start(), 0, 0}, text);
  return s.set != grammar::Matcher::kDead && s.need == 0 && m.accepting(s.set);
}

TEST(ChatOutput, RequiredCallGrammarsForMarkedSyntaxes) {
  const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
      "properties": {"zone": {"enum": ["UTC"]}}, "required": ["zone"]}}}])");
  // Hermes: the call object's keys in the order the template shows, "name" first.
  auto g = tool_call_grammar(kQwen3, tools, "get_time", false);
  EXPECT_TRUE(takes(
      g,
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}\n</tool_call>"));
  EXPECT_FALSE(takes(
      g,
      "<tool_call>\n{\"arguments\": {\"zone\": \"UTC\"}, \"name\": \"get_time\"}\n</tool_call>"));
  OutputSyntax harmony{false, false, CallSyntax::harmony, true};
  g = tool_call_grammar(harmony, tools, "", true);
  EXPECT_TRUE(takes(g,
                    "<|channel|>commentary to=functions.get_time "
                    "<|constrain|>json<|message|>{\"zone\": \"UTC\"}"));
  EXPECT_FALSE(takes(
      g,
      "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{\"city\": \"x\"}"));
  EXPECT_FALSE(takes(g, "<|channel|>final<|message|>hi"));
  // An analysis message may come first, as gpt-oss writes it before a call.
  EXPECT_TRUE(takes(g,
                    "<|channel|>analysis<|message|>Need the time; a < b.<|end|><|start|>assistant"
                    "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>"
                    "{\"zone\": \"UTC\"}"));
  EXPECT_FALSE(takes(g,
                     "<|channel|>analysis<|message|>hm<|end|><|start|>assistant<|channel|>final"
                     "<|message|>hi"));
  g = tool_call_grammar(harmony, tools, "get_weather", false);
  EXPECT_FALSE(takes(g,
                     "<|channel|>commentary to=functions.get_time "
                     "<|constrain|>json<|message|>{\"zone\": \"UTC\"}"));
  OutputSyntax r1{true, true, CallSyntax::deepseek, false, true};
  g = tool_call_grammar(r1, tools, "", true);
  const std::string call =
      "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": "
      "\"Oslo\"}\n```<｜tool▁call▁end｜>";
  EXPECT_TRUE(
      takes(g, "hm</think>\n<｜tool▁calls▁begin｜>" + call + "\n" + call + "<｜tool▁calls▁end｜>"));
  EXPECT_FALSE(takes(g, "<｜tool▁calls▁begin｜>" + call + "<｜tool▁calls▁end｜>"));  // thinks first
  OutputSyntax v31{false, false, CallSyntax::deepseek};
  g = tool_call_grammar(v31, tools, "", false);
  EXPECT_TRUE(takes(g,
                    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"zone\": "
                    "\"UTC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"));
  EXPECT_FALSE(takes(g,
                     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"zone\": "
                     "\"UTC\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"
                     "\"zone\": \"UTC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"));
}

// Magistral and Ministral 3 reasoning think in [THINK] ... [/THINK] and call as Mistral does;
// <think> in such an answer is text, and a required call may follow the thought.
TEST(ChatOutput, MinistralThinksInSquareBrackets) {
  const std::string ministral =
      "{{- '[THINK]' + block['thinking'] + '[/THINK]' }}...[TOOL_CALLS]' + name + '[ARGS]'";
  const OutputSyntax s = output_syntax(ministral, "[INST]hi[/INST]", true);
  EXPECT_TRUE(s.think);
  EXPECT_FALSE(s.opens_in_think);
  EXPECT_EQ(s.think_close, "[/THINK]");
  EXPECT_EQ(s.calls, CallSyntax::mistral);
  EXPECT_TRUE(s.args_tag);
  EXPECT_TRUE(output_syntax(ministral, "[INST]hi[/INST][THINK]\n", false).opens_in_think);
  expect_read(
      s,
      "[THINK]Weather: <think> is just text [x].[/THINK]\nChecking.[TOOL_CALLS]f[ARGS]{\"a\": 1}",
      "Weather: <think> is just text [x].", "Checking.", {{"f", R"({"a":1})"}});

  const nlohmann::ordered_json tools = nlohmann::ordered_json::parse(R"([
    {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
      "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}])");
  const auto g = tool_call_grammar(s, tools, "", false);
  EXPECT_TRUE(takes(g, "[THINK]hm [a] <b>[/THINK]\n[TOOL_CALLS]f[ARGS]{\"a\": 1}"));
  EXPECT_TRUE(takes(g, "[TOOL_CALLS]f[ARGS]{\"a\": 1}"));
  EXPECT_FALSE(takes(g, "[THINK]hm[/THINK]\nplain words"));
  EXPECT_FALSE(takes(g, "<think>hm</think>\n[TOOL_CALLS]f[ARGS]{\"a\": 1}"));
  EXPECT_FALSE(takes(g, "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {\"a\": 1}}]"));
  const std::string two = "[TOOL_CALLS]f[ARGS]{\"a\": 1}[TOOL_CALLS]f[ARGS]{\"a\": 2}";
  EXPECT_FALSE(takes(g, two));
  EXPECT_TRUE(takes(tool_call_grammar(s, tools, "", true), two));
}

TEST(ChatOutput, MessagesAndDeltasCarryReasoningAndToolCalls) {
  const ResponseMeta m{true, "chatcmpl-1", 0, "tiny", "v", "", false};
  ChoicePart p;
  p.reasoning = "r";
  p.tool_calls.push_back({0, "call_1", "get_weather", R"({"city":"Paris"})"});
  p.finish_reason = "tool_calls";
  const json body = json::parse(completion_body(m, {p}, {3, 4, 0}));
  EXPECT_EQ(body["choices"][0]["message"],
            json::parse(R"({"role":"assistant","content":null,"reasoning_content":"r",
              "tool_calls":[{"id":"call_1","type":"function",
                "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]})"));
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  const std::string ev = chunk_event(m, p);
  const json chunk = json::parse(ev.substr(6));
  EXPECT_EQ(chunk["choices"][0]["delta"]["tool_calls"][0]["index"], 0);
  EXPECT_EQ(chunk["choices"][0]["delta"]["reasoning_content"], "r");
  EXPECT_FALSE(chunk["choices"][0]["delta"].contains("content"));
  // A later piece of a streamed call: its index and more arguments only.
  ChoicePart more;
  more.tool_calls.push_back({0, "", "", R"("Oslo"})"});
  const json later = json::parse(chunk_event(m, more).substr(6))["choices"][0]["delta"];
  EXPECT_EQ(later["tool_calls"][0],
            json::parse(R"({"index":0,"function":{"arguments":"\"Oslo\"}"}})"));
  // A plain answer keeps its plain shape.
  ChoicePart plain;
  plain.text = "hi";
  EXPECT_EQ(json::parse(completion_body(m, {plain}, {1, 1, 0}))["choices"][0]["message"],
            json::parse(R"({"role":"assistant","content":"hi"})"));
}

}  // namespace
}  // namespace sy::server
