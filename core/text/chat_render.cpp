// Writing a conversation in each chat format (the layouts of llama.cpp's built-in formatter),
// keeping apart what the format writes (markup) from what the messages say (content).
#include <cctype>

#include "text/chat_template.h"

namespace sy::text {

namespace {

// Leading and trailing C-locale whitespace removed, as llama.cpp's trim().
std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

class Writer {
 public:
  Writer& mark(std::string_view s) {  // markup: the format's own text
    if (s.empty()) return *this;
    if (!r_.markup.empty() && r_.markup.back().end == r_.text.size())
      r_.markup.back().end += s.size();
    else
      r_.markup.push_back({r_.text.size(), r_.text.size() + s.size()});
    r_.text += s;
    return *this;
  }
  Writer& say(std::string_view s) {  // a message's content
    r_.text += s;
    return *this;
  }
  RenderedChat take() { return std::move(r_); }

 private:
  RenderedChat r_;
};

// <|im_start|>, <|start_header_id|>, <|header_start|>, <|role_start|> ... : role-tagged turns
// "<open>role<sep>content<close>" with an optional assistant opening.
void tagged(Writer& w, const std::vector<ChatMessage>& msgs, bool add, std::string_view open,
            std::string_view sep, std::string_view close, bool trimmed) {
  for (const auto& m : msgs)
    w.mark(open).mark(m.role).mark(sep).say(trimmed ? trim(m.content) : m.content).mark(close);
  if (add) w.mark(open).mark("assistant").mark(sep);
}

struct TaggedFormat {
  ChatFormat format;
  std::string_view open, sep, close;
  bool trimmed;
};

const TaggedFormat& tagged_format(ChatFormat f) {
  using F = ChatFormat;
  static constexpr TaggedFormat table[] = {
      {F::chatml, "<|im_start|>", "\n", "<|im_end|>\n", false},
      {F::phi4, "<|im_start|>", "<|im_sep|>", "<|im_end|>", false},
      {F::llama3, "<|start_header_id|>", "<|end_header_id|>\n\n", "<|eot_id|>", true},
      {F::llama4, "<|header_start|>", "<|header_end|>\n\n", "<|eot|>", true},
      {F::megrez, "<|role_start|>", "<|role_end|>", "<|turn_end|>", false},
      {F::phi3, "<|", "|>\n", "<|end|>\n", false},
      {F::zephyr, "<|", "|>\n", "<|endoftext|>\n", false},
      {F::falcon3, "<|", "|>\n", "\n", false},
  };
  for (const TaggedFormat& t : table)
    if (t.format == f) return t;
  return table[0];  // not reached: render_chat asks only for these
}

void mistral_v1_v3(Writer& w, const std::vector<ChatMessage>& msgs, ChatFormat f) {
  const std::string_view lead = f == ChatFormat::mistral_v1 ? " " : "";
  const std::string_view trail = f == ChatFormat::mistral_v3_tekken ? "" : " ";
  bool inside = false;
  for (const auto& m : msgs) {
    if (!inside) {
      w.mark(lead).mark("[INST]").mark(trail);
      inside = true;
    }
    if (m.role == "system") {
      w.say(m.content).mark("\n\n");
    } else if (m.role == "user") {
      w.say(m.content).mark(lead).mark("[/INST]");
    } else {
      w.mark(trail).say(f == ChatFormat::mistral_v3 ? trim(m.content) : m.content).mark("</s>");
      inside = false;
    }
  }
}

void llama2(Writer& w, const std::vector<ChatMessage>& msgs, ChatFormat f) {
  const bool sys = f != ChatFormat::llama2;
  const bool bos_inside = f == ChatFormat::llama2_sys_bos;
  const bool strip = f == ChatFormat::llama2_sys_strip;
  bool inside = true;  // the BOS that opens the first turn is the tokenizer's
  w.mark("[INST] ");
  for (const auto& m : msgs) {
    const std::string c = strip ? trim(m.content) : m.content;
    if (!inside) {
      inside = true;
      w.mark(bos_inside ? "<s>[INST] " : "[INST] ");
    }
    if (m.role == "system") {
      if (sys)
        w.mark("<<SYS>>\n").say(c).mark("\n<</SYS>>\n\n");
      else  // no system turn: its text opens the first instruction
        w.say(c).mark("\n");
    } else if (m.role == "user") {
      w.say(c).mark(" [/INST]");
    } else {
      w.say(c).mark("</s>");
      inside = false;
    }
  }
}

void gemma(Writer& w, const std::vector<ChatMessage>& msgs, bool add) {
  std::string system;  // Gemma has no system turn: it goes before the next user message
  for (const auto& m : msgs) {
    if (m.role == "system") {
      system += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    w.mark("<start_of_turn>").mark(role).mark("\n");
    if (!system.empty() && role != "model") {
      w.say(system).mark("\n\n");
      system.clear();
    }
    w.say(trim(m.content)).mark("<end_of_turn>\n");
  }
  if (add) w.mark("<start_of_turn>model\n");
}

void orion(Writer& w, const std::vector<ChatMessage>& msgs) {
  std::string system;
  for (const auto& m : msgs) {
    if (m.role == "system") {
      system += m.content;
    } else if (m.role == "user") {
      w.mark("Human: ");
      if (!system.empty()) {
        w.say(system).mark("\n\n");
        system.clear();
      }
      w.say(m.content).mark("\n\nAssistant: </s>");
    } else {
      w.say(m.content).mark("</s>");
    }
  }
}

// Formats whose turns are a fixed prefix and suffix per role.
struct RoleText {
  std::string_view role, prefix, suffix;
};

void by_role(Writer& w, const std::vector<ChatMessage>& msgs, std::initializer_list<RoleText> t,
             bool trimmed) {
  for (const auto& m : msgs)
    for (const RoleText& r : t)
      if (m.role == r.role) {
        w.mark(r.prefix).say(trimmed ? trim(m.content) : m.content).mark(r.suffix);
        break;
      }
}

const std::string_view kEndOfSentence =
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81"
    "of\xE2\x96\x81"
    "sentence\xEF\xBD\x9C>";

}  // namespace

RenderedChat render_chat(ChatFormat f, const std::vector<ChatMessage>& messages, bool add) {
  using F = ChatFormat;
  std::vector<ChatMessage> msgs = messages;
  for (auto& m : msgs)
    if (m.role == "developer") m.role = "system";  // OpenAI's newer name for it
  Writer w;
  switch (f) {
    case F::chatml:
    case F::phi4:
    case F::llama3:
    case F::llama4:
    case F::megrez:
    case F::phi3:
    case F::zephyr:
    case F::falcon3: {
      const TaggedFormat& t = tagged_format(f);
      tagged(w, msgs, add, t.open, t.sep, t.close, t.trimmed);
      break;
    }
    case F::glmedge:
      tagged(w, msgs, false, "<|", "|>\n", "", false);
      if (add) w.mark("<|assistant|>");
      break;
    case F::chatglm4:
      w.mark("[gMASK]<sop>");
      tagged(w, msgs, add, "<|", "|>\n", "", false);
      break;
    case F::chatglm3:
      w.mark("[gMASK]sop");
      tagged(w, msgs, false, "<|", "|>\n ", "", false);
      if (add) w.mark("<|assistant|>");
      break;
    case F::granite:
      for (const auto& m : msgs) {
        w.mark("<|start_of_role|>").mark(m.role).mark("<|end_of_role|>");
        if (m.role == "assistant_tool_call") w.mark("<|tool_call|>");
        w.say(m.content).mark("<|end_of_text|>\n");
      }
      if (add) w.mark("<|start_of_role|>assistant<|end_of_role|>");
      break;
    case F::mistral_v7:
    case F::mistral_v7_tekken: {
      const std::string_view sp = f == F::mistral_v7 ? " " : "";
      for (const auto& m : msgs) {
        if (m.role == "system")
          w.mark("[SYSTEM_PROMPT]").mark(sp).say(m.content).mark("[/SYSTEM_PROMPT]");
        else if (m.role == "user")
          w.mark("[INST]").mark(sp).say(m.content).mark("[/INST]");
        else
          w.mark(sp).say(m.content).mark("</s>");
      }
      break;
    }
    case F::mistral_v1:
    case F::mistral_v3:
    case F::mistral_v3_tekken:
      mistral_v1_v3(w, msgs, f);
      break;
    case F::llama2:
    case F::llama2_sys:
    case F::llama2_sys_bos:
    case F::llama2_sys_strip:
      llama2(w, msgs, f);
      break;
    case F::monarch:
      for (size_t i = 0; i < msgs.size(); ++i)
        w.mark(i ? "<s>" : "").mark(msgs[i].role).mark("\n").say(msgs[i].content).mark("</s>\n");
      if (add) w.mark("<s>assistant\n");
      break;
    case F::gemma:
      gemma(w, msgs, add);
      break;
    case F::orion:
      orion(w, msgs);
      break;
    case F::openchat:
      for (const auto& m : msgs) {
        if (m.role == "system") {
          w.say(m.content).mark("<|end_of_turn|>");
        } else {
          std::string role = m.role;
          if (!role.empty()) role[0] = char(std::toupper(static_cast<unsigned char>(role[0])));
          w.mark("GPT4 Correct ").mark(role).mark(": ").say(m.content).mark("<|end_of_turn|>");
        }
      }
      if (add) w.mark("GPT4 Correct Assistant:");
      break;
    case F::vicuna:
    case F::vicuna_orca:
      by_role(
          w, msgs,
          {{"system", f == F::vicuna_orca ? "SYSTEM: " : "", f == F::vicuna_orca ? "\n" : "\n\n"},
           {"user", "USER: ", "\n"},
           {"assistant", "ASSISTANT: ", "</s>\n"}},
          false);
      if (add) w.mark("ASSISTANT:");
      break;
    case F::deepseek:
      by_role(w, msgs,
              {{"system", "", ""},
               {"user", "### Instruction:\n", "\n"},
               {"assistant", "### Response:\n", "\n<|EOT|>\n"}},
              false);
      if (add) w.mark("### Response:\n");
      break;
    case F::deepseek2:
      by_role(w, msgs,
              {{"system", "", "\n\n"},
               {"user", "User: ", "\n\n"},
               {"assistant", "Assistant: ", kEndOfSentence}},
              false);
      if (add) w.mark("Assistant:");
      break;
    case F::deepseek3: {
      const std::string_view user =
          "<\xEF\xBD\x9C"
          "User\xEF\xBD\x9C>";
      const std::string_view assistant =
          "<\xEF\xBD\x9C"
          "Assistant\xEF\xBD\x9C>";
      by_role(
          w, msgs,
          {{"system", "", "\n\n"}, {"user", user, ""}, {"assistant", assistant, kEndOfSentence}},
          false);
      if (add) w.mark(assistant);
      break;
    }
    case F::command_r:
      by_role(w, msgs,
              {{"system", "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
               {"user", "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
               {"assistant", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"}},
              true);
      if (add) w.mark("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>");
      break;
    case F::minicpm:
      for (const auto& m : msgs) {
        if (m.role == "user")
          w.mark("<\xE7\x94\xA8\xE6\x88\xB7>").say(trim(m.content)).mark("<AI>");  // <用户>
        else
          w.say(trim(m.content));
      }
      break;
    case F::exaone3:
    case F::exaone4:
      // EXAONE 4 adds tool turns; EXAONE 3 has none and drops them.
      by_role(w, msgs,
              {{"system", "[|system|]", "[|endofturn|]\n"},
               {"user", "[|user|]", "\n"},
               {"assistant", "[|assistant|]", "[|endofturn|]\n"},
               {f == F::exaone4 ? "tool" : "", "[|tool|]", "[|endofturn|]\n"}},
              true);
      if (add) w.mark("[|assistant|]");
      break;
    case F::rwkv_world:
      // The assistant opening follows a final user turn whatever add_generation_prompt says.
      for (size_t i = 0; i < msgs.size(); ++i) {
        const auto& m = msgs[i];
        if (m.role == "system") {
          w.mark("System: ").say(trim(m.content)).mark("\n\n");
        } else if (m.role == "user") {
          w.mark("User: ").say(trim(m.content)).mark("\n\n");
          if (i + 1 == msgs.size()) w.mark("Assistant:");
        } else if (m.role == "assistant") {
          w.mark("Assistant: ").say(trim(m.content)).mark("\n\n");
        }
      }
      break;
    case F::gigachat: {
      const bool system = !msgs.empty() && msgs[0].role == "system";
      w.mark("<s>");
      if (system) w.say(msgs[0].content).mark("<|message_sep|>");
      for (size_t i = system ? 1 : 0; i < msgs.size(); ++i) {
        if (msgs[i].role == "user")
          w.mark("user<|role_sep|>")
              .say(msgs[i].content)
              .mark("<|message_sep|>available functions<|role_sep|>[]<|message_sep|>");
        else if (msgs[i].role == "assistant")
          w.mark("assistant<|role_sep|>").say(msgs[i].content).mark("<|message_sep|>");
      }
      if (add) w.mark("assistant<|role_sep|>");
      break;
    }
    case F::yandex: {
      // " Пользователь: " and " Ассистент: "
      const std::string_view user =
          " \xD0\x9F\xD0\xBE\xD0\xBB\xD1\x8C\xD0\xB7\xD0\xBE\xD0\xB2\xD0\xB0\xD1\x82\xD0\xB5\xD0"
          "\xBB\xD1\x8C: ";
      const std::string_view assistant =
          " \xD0\x90\xD1\x81\xD1\x81\xD0\xB8\xD1\x81\xD1\x82\xD0\xB5\xD0\xBD\xD1\x82:";
      for (const auto& m : msgs) {
        if (m.role == "user")
          w.mark(user).say(m.content).mark("\n\n");
        else if (m.role == "assistant")
          w.mark(assistant).mark(" ").say(m.content).mark("\n\n");
      }
      if (add) w.mark(assistant).mark("[SEP]");
      break;
    }
    case F::bailing:
      for (const auto& m : msgs) {
        std::string role = m.role == "user" ? "HUMAN" : m.role;
        for (char& c : role) c = char(std::toupper(static_cast<unsigned char>(c)));
        w.mark("<role>").mark(role).mark("</role>").say(m.content);
      }
      if (add) w.mark("<role>ASSISTANT</role>");
      break;
    case F::smolvlm:
      w.mark("<|im_start|>");
      for (const auto& m : msgs) {
        if (m.role == "system")
          w.say(m.content).mark("\n\n");
        else if (m.role == "user")
          w.mark("User: ").say(m.content).mark("<end_of_utterance>\n");
        else
          w.mark("Assistant: ").say(m.content).mark("<end_of_utterance>\n");
      }
      if (add) w.mark("Assistant:");
      break;
  }
  return w.take();
}

}  // namespace sy::text
