// Chat templates: every family renders one fixed conversation (system, user, assistant, user,
// with the generation prompt) to the text its documented format gives, written out here by hand;
// real Jinja templates (tests/fixtures/chat_templates.json) are recognised as llama.cpp
// recognises them; and a template no family matches is refused with a message that names it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "switchyard/common/error.h"
#include "text/chat_template.h"
#include "text/conversation.h"

namespace sy::text {
namespace {

// The assistant's padding shows which formats trim message content.
const std::vector<ChatMessage> kChat = {{"system", "You are a helpful assistant"},
                                        {"user", "Hello"},
                                        {"assistant", "  Hi there  "},
                                        {"user", "Who are you"}};

// U+FF5C and U+2581 as DeepSeek spells its markers; <用户>; Пользователь / Ассистент.
#define FW "\xEF\xBD\x9C"
const std::string kEos = "<" FW
                         "end\xE2\x96\x81"
                         "of\xE2\x96\x81"
                         "sentence" FW ">";
const std::string kUserZh = "<\xE7\x94\xA8\xE6\x88\xB7>";
const std::string kUserRu =
    "\xD0\x9F\xD0\xBE\xD0\xBB\xD1\x8C\xD0\xB7\xD0\xBE\xD0\xB2\xD0\xB0\xD1\x82\xD0\xB5\xD0\xBB\xD1"
    "\x8C";
const std::string kAsstRu =
    "\xD0\x90\xD1\x81\xD1\x81\xD0\xB8\xD1\x81\xD1\x82\xD0\xB5\xD0\xBD\xD1\x82";
const std::string S = "You are a helpful assistant";

const std::vector<std::pair<std::string, std::string>>& expected() {
  static const std::vector<std::pair<std::string, std::string>> e = {
      {"chatml", "<|im_start|>system\n" + S +
                     "<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
                     "<|im_start|>assistant\n  Hi there  <|im_end|>\n<|im_start|>user\nWho are "
                     "you<|im_end|>\n"
                     "<|im_start|>assistant\n"},
      {"llama2", "[INST] " + S + "\nHello [/INST]  Hi there  </s>[INST] Who are you [/INST]"},
      {"llama2-sys", "[INST] <<SYS>>\n" + S +
                         "\n<</SYS>>\n\nHello [/INST]  Hi there  </s>[INST] Who are you [/INST]"},
      {"llama2-sys-bos",
       "[INST] <<SYS>>\n" + S +
           "\n<</SYS>>\n\nHello [/INST]  Hi there  </s><s>[INST] Who are you [/INST]"},
      {"llama2-sys-strip", "[INST] <<SYS>>\n" + S +
                               "\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]"},
      {"mistral-v1",
       " [INST] " + S + "\n\nHello [/INST]   Hi there  </s> [INST] Who are you [/INST]"},
      {"mistral-v3", "[INST] " + S + "\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST]"},
      {"mistral-v3-tekken",
       "[INST]" + S + "\n\nHello[/INST]  Hi there  </s>[INST]Who are you[/INST]"},
      {"mistral-v7",
       "[SYSTEM_PROMPT] " + S +
           "[/SYSTEM_PROMPT][INST] Hello[/INST]   Hi there  </s>[INST] Who are you[/INST]"},
      {"mistral-v7-tekken",
       "[SYSTEM_PROMPT]" + S +
           "[/SYSTEM_PROMPT][INST]Hello[/INST]  Hi there  </s>[INST]Who are you[/INST]"},
      {"phi3", "<|system|>\n" + S +
                   "<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\n  Hi there  <|end|>\n"
                   "<|user|>\nWho are you<|end|>\n<|assistant|>\n"},
      {"phi4", "<|im_start|>system<|im_sep|>" + S +
                   "<|im_end|><|im_start|>user<|im_sep|>Hello<|im_end|>"
                   "<|im_start|>assistant<|im_sep|>  Hi there  <|im_end|><|im_start|>user<|im_sep|>"
                   "Who are you<|im_end|><|im_start|>assistant<|im_sep|>"},
      {"falcon3", "<|system|>\n" + S +
                      "\n<|user|>\nHello\n<|assistant|>\n  Hi there  \n<|user|>\n"
                      "Who are you\n<|assistant|>\n"},
      {"zephyr",
       "<|system|>\n" + S +
           "<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\n"
           "  Hi there  <|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n"},
      {"monarch", "system\n" + S +
                      "</s>\n<s>user\nHello</s>\n<s>assistant\n  Hi there  </s>\n"
                      "<s>user\nWho are you</s>\n<s>assistant\n"},
      {"gemma", "<start_of_turn>user\n" + S +
                    "\n\nHello<end_of_turn>\n<start_of_turn>model\n"
                    "Hi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n"
                    "<start_of_turn>model\n"},
      {"orion", "Human: " + S +
                    "\n\nHello\n\nAssistant: </s>  Hi there  </s>Human: Who are you\n\n"
                    "Assistant: </s>"},
      {"openchat",
       S + "<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 Correct Assistant: "
           "  Hi there  <|end_of_turn|>GPT4 Correct User: Who are you<|end_of_turn|>"
           "GPT4 Correct Assistant:"},
      {"vicuna", S + "\n\nUSER: Hello\nASSISTANT:   Hi there  </s>\nUSER: Who are you\nASSISTANT:"},
      {"vicuna-orca",
       "SYSTEM: " + S +
           "\nUSER: Hello\nASSISTANT:   Hi there  </s>\nUSER: Who are you\nASSISTANT:"},
      {"deepseek", S + "### Instruction:\nHello\n### Response:\n  Hi there  \n<|EOT|>\n"
                       "### Instruction:\nWho are you\n### Response:\n"},
      {"deepseek2",
       S + "\n\nUser: Hello\n\nAssistant:   Hi there  " + kEos + "User: Who are you\n\nAssistant:"},
      {"deepseek3", S + "\n\n<" FW "User" FW ">Hello<" FW "Assistant" FW ">  Hi there  " + kEos +
                        "<" FW "User" FW ">Who are you<" FW "Assistant" FW ">"},
      {"command-r", "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>" + S +
                        "<|END_OF_TURN_TOKEN|>"
                        "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|>"
                        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|>"
                        "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|>"
                        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
      {"llama3", "<|start_header_id|>system<|end_header_id|>\n\n" + S +
                     "<|eot_id|>"
                     "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
                     "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
                     "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>"
                     "<|start_header_id|>assistant<|end_header_id|>\n\n"},
      {"chatglm3",
       "[gMASK]sop<|system|>\n " + S +
           "<|user|>\n Hello<|assistant|>\n   Hi there  <|user|>\n Who are you<|assistant|>"},
      {"chatglm4",
       "[gMASK]<sop><|system|>\n" + S +
           "<|user|>\nHello<|assistant|>\n  Hi there  <|user|>\nWho are you<|assistant|>\n"},
      {"glmedge",
       "<|system|>\n" + S +
           "<|user|>\nHello<|assistant|>\n  Hi there  <|user|>\nWho are you<|assistant|>"},
      {"minicpm", S + kUserZh + "Hello<AI>Hi there" + kUserZh + "Who are you<AI>"},
      {"exaone3", "[|system|]" + S +
                      "[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n"
                      "[|user|]Who are you\n[|assistant|]"},
      {"exaone4", "[|system|]" + S +
                      "[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi there[|endofturn|]\n"
                      "[|user|]Who are you\n[|assistant|]"},
      {"rwkv-world",
       "System: " + S +
           "\n\nUser: Hello\n\nAssistant: Hi there\n\nUser: Who are you\n\nAssistant:"},
      {"granite", "<|start_of_role|>system<|end_of_role|>" + S +
                      "<|end_of_text|>\n"
                      "<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n"
                      "<|start_of_role|>assistant<|end_of_role|>  Hi there  <|end_of_text|>\n"
                      "<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n"
                      "<|start_of_role|>assistant<|end_of_role|>"},
      {"gigachat",
       "<s>" + S +
           "<|message_sep|>user<|role_sep|>Hello<|message_sep|>available functions"
           "<|role_sep|>[]<|message_sep|>assistant<|role_sep|>  Hi there  <|message_sep|>"
           "user<|role_sep|>Who are you<|message_sep|>available functions<|role_sep|>[]"
           "<|message_sep|>assistant<|role_sep|>"},
      {"megrez", "<|role_start|>system<|role_end|>" + S +
                     "<|turn_end|><|role_start|>user<|role_end|>"
                     "Hello<|turn_end|><|role_start|>assistant<|role_end|>  Hi there  <|turn_end|>"
                     "<|role_start|>user<|role_end|>Who are you<|turn_end|>"
                     "<|role_start|>assistant<|role_end|>"},
      {"yandex", " " + kUserRu + ": Hello\n\n " + kAsstRu + ":   Hi there  \n\n " + kUserRu +
                     ": Who are you\n\n " + kAsstRu + ":[SEP]"},
      {"bailing", "<role>SYSTEM</role>" + S +
                      "<role>HUMAN</role>Hello<role>ASSISTANT</role>  Hi there  "
                      "<role>HUMAN</role>Who are you<role>ASSISTANT</role>"},
      {"llama4",
       "<|header_start|>system<|header_end|>\n\n" + S +
           "<|eot|><|header_start|>user"
           "<|header_end|>\n\nHello<|eot|><|header_start|>assistant<|header_end|>\n\nHi there"
           "<|eot|><|header_start|>user<|header_end|>\n\nWho are you<|eot|>"
           "<|header_start|>assistant<|header_end|>\n\n"},
      {"smolvlm", "<|im_start|>" + S +
                      "\n\nUser: Hello<end_of_utterance>\nAssistant:   Hi there  "
                      "<end_of_utterance>\nUser: Who are you<end_of_utterance>\nAssistant:"},
  };
  return e;
}

TEST(ChatTemplate, EveryFamilyRendersTheConversation) {
  ASSERT_EQ(expected().size(), chat_format_names().size()) << "a family without an expected text";
  for (const auto& [name, want] : expected()) {
    const auto f = chat_format_by_name(name);
    ASSERT_TRUE(f) << name;
    EXPECT_EQ(chat_format_name(*f), name);
    EXPECT_EQ(render_chat(*f, kChat, true).text, want) << name;
  }
}

// The text outside the markup spans: what the messages contributed.
std::string content_of(const RenderedChat& r) {
  std::string out;
  size_t at = 0;
  for (const TextSpan& s : r.markup) {
    EXPECT_LE(at, s.begin);
    EXPECT_LT(s.begin, s.end);
    out += r.text.substr(at, s.begin - at);
    at = s.end;
  }
  return out + r.text.substr(at);
}

TEST(ChatTemplate, MarkupSpansCoverExactlyTheFormatsText) {
  EXPECT_EQ(content_of(render_chat(ChatFormat::chatml, kChat, true)),
            S + "Hello  Hi there  Who are you");
  EXPECT_EQ(content_of(render_chat(ChatFormat::llama3, kChat, true)),
            S + "HelloHi thereWho are you");
  EXPECT_EQ(content_of(render_chat(ChatFormat::gemma, kChat, true)),
            S + "HelloHi thereWho are you");
  // A message that spells markup stays content.
  const RenderedChat r = render_chat(ChatFormat::chatml, {{"user", "<|im_end|>"}}, false);
  EXPECT_EQ(r.text, "<|im_start|>user\n<|im_end|><|im_end|>\n");
  EXPECT_EQ(content_of(r), "<|im_end|>");
}

TEST(ChatTemplate, GenerationPromptAndRoles) {
  EXPECT_EQ(render_chat(ChatFormat::chatml, {{"user", "Hi"}}, false).text,
            "<|im_start|>user\nHi<|im_end|>\n");
  // "developer" is OpenAI's newer name for the system role.
  EXPECT_EQ(render_chat(ChatFormat::llama3, {{"developer", "Be brief"}}, false).text,
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief<|eot_id|>");
}

TEST(ChatTemplate, DetectsRealTemplates) {
  std::ifstream in(std::string(SWITCHYARD_SOURCE_DIR) + "/tests/fixtures/chat_templates.json");
  ASSERT_TRUE(in) << "missing tests/fixtures/chat_templates.json";
  const auto j = nlohmann::json::parse(in);
  size_t n = 0;
  for (const auto& t : j.at("templates")) {
    const auto got = detect_chat_format(t.at("template").get<std::string>());
    const std::string want =
        t.at("family").is_null() ? "(none)" : t.at("family").get<std::string>();
    EXPECT_EQ(got ? std::string(chat_format_name(*got)) : "(none)", want) << t.at("source");
    ++n;
  }
  EXPECT_EQ(n, 32u);
  // A template that is exactly a family's name is that family (llama.cpp accepts names too).
  for (const auto& name : chat_format_names())
    EXPECT_EQ(detect_chat_format(name), chat_format_by_name(name)) << name;
  EXPECT_EQ(detect_chat_format("INVALID TEMPLATE"), std::nullopt);
}

TEST(ChatTemplate, ResolveAndRefuse) {
  // Configured name first, then the file's template as Jinja, then the family a template that
  // does not parse names, then chatml for a file without one.
  EXPECT_EQ(ChatTemplate::resolve("gemma", std::string("{{ '<|im_start|>' }}")).format(),
            ChatFormat::gemma);
  const ChatTemplate jinja = ChatTemplate::resolve("", std::string("{{ '<|im_start|>' }}"));
  EXPECT_TRUE(jinja.is_jinja());
  EXPECT_EQ(jinja.render(kChat, true).text, "<|im_start|>");
  const ChatTemplate broken = ChatTemplate::resolve("", std::string("{{ '<|im_start|>' }"));
  ASSERT_TRUE(broken.ok());
  EXPECT_FALSE(broken.is_jinja());
  EXPECT_EQ(broken.format(), ChatFormat::chatml);
  EXPECT_EQ(broken.warning(),
            "the model's chat template does not parse as Jinja (template line 1: unterminated "
            "expression (no '}}')); chats use the built-in 'chatml' format its markers name");
  EXPECT_EQ(ChatTemplate::resolve("", std::string("zephyr")).format(), ChatFormat::zephyr);
  EXPECT_EQ(ChatTemplate::resolve("", std::nullopt).format(), ChatFormat::chatml);
  EXPECT_THROW(ChatTemplate::resolve("gemma9", std::nullopt), sy::Error);
  const ChatTemplate bad =
      ChatTemplate::resolve("", std::string("{% for m in messages %}<<{{ m['role'] }}>>\n"
                                            "{{ m['content'] }}{% endfor"));
  ASSERT_FALSE(bad.ok());
  std::string names;
  for (const auto& n : chat_format_names()) names += (names.empty() ? "" : ", ") + n;
  const std::string want =
      "The model's chat template (tokenizer.chat_template \"{% for m in messages %}<<{{ "
      "m['role'] }}>>\\n{{ m['content'] }...\") is not one of the template families Switchyard "
      "renders, so "
      "chat requests are refused (completions still work). Set [model] chat_template to one of: " +
      names + ". It does not parse as Jinja either: template line 2: unterminated tag (no '%}').";
  EXPECT_EQ(bad.error(), want);
  try {
    bad.render(kChat, true);
    ADD_FAILURE() << "rendered with an unrecognised template";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(e.what(), want);
  }
}

// A conversation file (apply-template --conversation) that is not one: the field and the fault.
TEST(ChatTemplate, ConversationErrorsNameTheField) {
  auto why = [](const char* text) {
    try {
      conversation_from_json(nlohmann::ordered_json::parse(text));
    } catch (const sy::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(why("[]"), "a conversation must be a JSON object");
  EXPECT_EQ(why(R"({"messages": {}})"), "messages: expected an array");
  EXPECT_EQ(why(R"({"messages": [], "add_generation_prompt": 1})"),
            "add_generation_prompt: expected true or false");
  EXPECT_EQ(why(R"({"messages": [], "kwargs": []})"), "kwargs: expected an object");
  EXPECT_EQ(why(R"({"messages": [], "special_tokens": []})"),
            "special_tokens: expected an object of strings");
  EXPECT_EQ(why(R"({"messages": [], "special_tokens": {"bos_token": 1}})"),
            "special_tokens.bos_token: expected a string");
  EXPECT_EQ(why(R"({"messages": [], "strftime_now": "2025-13-01"})"),
            "strftime_now: expected a date \"YYYY-MM-DD\"");
  const Conversation c = conversation_from_json(
      nlohmann::ordered_json::parse(R"({"messages": [], "strftime_now": "2025-06-15"})"));
  ASSERT_TRUE(c.now.has_value());
  const std::tm now = c.now.value_or(std::tm{});
  EXPECT_EQ(now.tm_wday, 0);  // a Sunday
  EXPECT_EQ(now.tm_yday, 165);
}

}  // namespace
}  // namespace sy::text
