// A chat answer read as its template's family writes it: reasoning in <think>, tool calls in
// <tool_call> (Hermes), after [TOOL_CALLS] (Mistral) or as the whole answer (Llama 3), content
// around them, the same however the text is cut into streamed pieces; and
// the OpenAI message and delta shapes that carry them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/chat_output.h"
#include "server/openai_response.h"

namespace sy::server {
namespace {

using nlohmann::json;

struct Read {
  std::string content, reasoning;
  std::vector<ToolCall> calls;
};

// The answer fed `piece` bytes at a time, then finished.
Read read(const OutputSyntax& s, const std::string& text, size_t piece) {
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

const OutputSyntax kQwen3{true, false, CallSyntax::hermes};

TEST(ChatOutput, SplitsReasoningToolCallsAndContentWhateverThePieces) {
  const std::string answer =
      "<think>\nThe user wants weather.\n</think>\n\nLet me check.\n<tool_call>\n"
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n"
      "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, answer.size()}) {
    const Read r = read(kQwen3, answer, piece);
    EXPECT_EQ(r.reasoning, "\nThe user wants weather.\n") << piece;
    EXPECT_EQ(r.content, "Let me check.\n") << piece;
    ASSERT_EQ(r.calls.size(), 2u) << piece;
    EXPECT_EQ(r.calls[0].name, "get_weather");
    EXPECT_EQ(r.calls[0].arguments, R"({"city":"Paris","unit":"celsius"})");  // the model's order
    EXPECT_EQ(r.calls[0].id, "call_x_0_0");
    EXPECT_EQ(r.calls[1].name, "get_time");
    EXPECT_EQ(r.calls[1].arguments, "{}");
    EXPECT_EQ(r.calls[1].index, 1u);
  }
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
  // What does not parse is the text it was.
  r = read(mistral, "a[TOOL_CALLS]f[ARGS]{oops", 2);
  EXPECT_EQ(r.content, "a[TOOL_CALLS]f[ARGS]{oops");
  EXPECT_TRUE(r.calls.empty());
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
  // A plain answer keeps its plain shape.
  ChoicePart plain;
  plain.text = "hi";
  EXPECT_EQ(json::parse(completion_body(m, {plain}, {1, 1, 0}))["choices"][0]["message"],
            json::parse(R"({"role":"assistant","content":"hi"})"));
}

}  // namespace
}  // namespace sy::server
