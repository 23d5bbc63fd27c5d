#include "server/chat_output.h"

#include <nlohmann/json.hpp>

#include "server/dsml_call.h"
#include "server/harmony_output.h"

namespace sy::server {
namespace {

constexpr std::string_view kSquareThinkOpen = "[THINK]", kSquareThinkClose = "[/THINK]";
constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";
constexpr std::string_view kMistralCalls = "[TOOL_CALLS]", kMistralArgs = "[ARGS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kDsCallsBegin = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>",
                           kDsCallsEnd = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>",
                           kDsCallBegin = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>",
                           kDsCallEnd = "<\uFF5Ctool\u2581call\u2581end\uFF5C>",
                           kDsSep = "<\uFF5Ctool\u2581sep\uFF5C>";
constexpr std::string_view kHarmonyChannel = "<|channel|>";

// JSON in the client's key order; a discarded value when it is not JSON.
nlohmann::ordered_json parse(std::string_view text) {
  return nlohmann::ordered_json::parse(text, nullptr, false);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

enum class Head { need_more, ok, mismatch };

// The start of a DeepSeek call's body up to its arguments' opening brace: its name, and where
// the arguments start (`at`).
Head deepseek_head(std::string_view body, std::string& name, size_t& at) {
  const size_t sep = body.find(kDsSep);
  if (sep == std::string_view::npos) return Head::need_more;
  std::string_view n = trim(body.substr(0, sep));
  size_t p = sep + kDsSep.size();
  if (n == "function") {  // R1, V3: the name on its own line, then a ```json fence
    const size_t nl = body.find('\n', p);
    if (nl == std::string_view::npos) return Head::need_more;
    n = trim(body.substr(p, nl - p));
    p = body.find_first_not_of(" \n", nl);
    if (p == std::string_view::npos) return Head::need_more;
    constexpr std::string_view kFence = "```json";
    if (kFence.starts_with(body.substr(p, kFence.size())) && body.size() - p < kFence.size())
      return Head::need_more;
    if (body.substr(p).starts_with(kFence)) p += kFence.size();
  }
  p = body.find_first_not_of(" \n", p);
  if (p == std::string_view::npos) return Head::need_more;
  if (n.empty() || body[p] != '{') return Head::mismatch;
  name = std::string(n);
  at = p;
  return Head::ok;
}

// A DeepSeek call's body read whole: "function<｜tool▁sep｜>NAME\n```json\n{...}\n```" (R1, V3) or
// "NAME<｜tool▁sep｜>{...}" (V3.1); null when it is neither.
nlohmann::ordered_json deepseek_call(std::string_view body) {
  std::string name;
  size_t at = 0;
  if (deepseek_head(body, name, at) != Head::ok) return nullptr;
  std::string_view args = trim(body.substr(at));
  if (args.ends_with("```")) args.remove_suffix(3);
  return {{"name", std::move(name)}, {"arguments", parse(trim(args))}};
}

// A Mistral call piece's name: its text up to [ARGS] (at `args`) or an earlier [CALL_ID].
std::string_view mistral_name(std::string_view piece, size_t args) {
  return trim(piece.substr(0, std::min(args, piece.find("[CALL_ID]"))));
}

}  // namespace

size_t tag_or_prefix(std::string_view s, std::string_view tag, bool& whole) {
  const size_t at = s.find(tag);
  whole = at != std::string_view::npos;
  if (whole) return at;
  for (size_t n = std::min(tag.size() - 1, s.size()); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return s.size() - n;
  return std::string_view::npos;
}

TagAt earliest_tag(std::string_view s, const std::vector<std::string_view>& tags) {
  TagAt best;
  for (std::string_view t : tags) {
    bool whole = false;
    const size_t at = tag_or_prefix(s, t, whole);
    if (at < best.at || (at == best.at && whole)) best = {at, t, whole};
  }
  return best;
}

OutputSyntax output_syntax(std::string_view template_source, std::string_view prompt,
                           bool tools_offered) {
  OutputSyntax s;
  s.channels = template_source.find(kHarmonyChannel) != std::string_view::npos;
  if (template_source.find(kSquareThinkClose) != std::string_view::npos) {
    s.think_open = kSquareThinkOpen;
    s.think_close = kSquareThinkClose;
  }
  s.think = !s.channels && template_source.find(s.think_close) != std::string_view::npos;
  if (s.think) {
    size_t end = prompt.size();
    while (end > 0 && (prompt[end - 1] == '\n' || prompt[end - 1] == ' ')) --end;
    s.opens_in_think = prompt.substr(0, end).ends_with(s.think_open);
  }
  if (!tools_offered) return s;
  if (s.channels)
    s.calls = CallSyntax::harmony;
  else if (template_source.find(kCallOpen) != std::string_view::npos)
    s.calls = CallSyntax::hermes;
  else if (template_source.find(kMistralCalls) != std::string_view::npos) {
    s.calls = CallSyntax::mistral;
    s.args_tag = template_source.find(kMistralArgs) != std::string_view::npos;
  } else if (template_source.find(dsml::kMarker) != std::string_view::npos) {
    s.calls = CallSyntax::dsml;
  } else if (template_source.find(kDsCallBegin) != std::string_view::npos) {
    s.calls = CallSyntax::deepseek;
    s.fenced = template_source.find("```json") != std::string_view::npos;
  } else if (template_source.find(kPythonTag) != std::string_view::npos ||
             template_source.find("\"parameters\": ") != std::string_view::npos)
    s.calls = CallSyntax::llama3;
  return s;
}

ChatOutput::ChatOutput(OutputSyntax syntax, std::string call_id_prefix)
    : syntax_(syntax),
      state_(syntax.opens_in_think ? State::reasoning : State::content),
      calls_(call_id_prefix) {
  if (syntax_.channels)
    harmony_ = std::make_unique<HarmonyOutput>(syntax_.calls == CallSyntax::harmony,
                                               std::move(call_id_prefix));
}

ChatOutput::~ChatOutput() = default;
ChatOutput::ChatOutput(ChatOutput&&) noexcept = default;
ChatOutput& ChatOutput::operator=(ChatOutput&&) noexcept = default;

size_t ChatOutput::calls() const {
  return harmony_ ? harmony_->calls() : calls_.count();
}

ChatOutput::Delta ChatOutput::feed(std::string_view text) {
  if (harmony_) return harmony_->feed(text);
  Delta d;
  buf_ += text;
  step(d, false);
  return d;
}

ChatOutput::Delta ChatOutput::finish() {
  if (harmony_) return harmony_->finish();
  Delta d;
  step(d, true);
  if (state_ == State::call && !calls_.started()) {
    if (syntax_.calls == CallSyntax::deepseek) {  // cut off before its end marker: read it still
      if (!add_call(deepseek_call(call_), d)) d.content += std::string(kDsCallBegin) + call_;
    } else {  // never became a call: it was text after all
      d.content += std::string(kCallOpen) + call_;
    }
  }
  // A tail none of whose calls went out is read whole (or is the text it was).
  if (state_ == State::tail && calls_.count() == calls_at_tail_) read_tail(d);
  return d;
}

bool ChatOutput::add_call(const nlohmann::ordered_json& j, Delta& d) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return false;
  const char* key = j.contains("arguments") ? "arguments" : "parameters";
  const auto& a = j.contains(key) ? j[key] : nlohmann::ordered_json::object();
  if (!a.is_object() && !a.is_string()) return false;
  calls_.add(d.calls, j["name"].get<std::string>(),
             a.is_string() ? a.get<std::string>() : a.dump());
  return true;
}

// A tail read whole at the end, when it was not streamed: all of its calls, or its text.
void ChatOutput::read_tail(Delta& d) {
  const std::string tail = std::move(call_);
  call_.clear();
  state_ = State::content;
  std::vector<nlohmann::ordered_json> calls;
  if (syntax_.calls == CallSyntax::mistral) {
    // [TOOL_CALLS] then [{"name", "arguments"}, ...] (Nemo), or name[ARGS]{...} pieces, each
    // after its own [TOOL_CALLS] (Small 3.2, Devstral, Ministral 3).
    const std::string body = tail.substr(kMistralCalls.size());
    const auto list = parse(body);
    if (list.is_array()) {
      for (const auto& c : list) calls.push_back(c);
    } else {
      for (size_t at = 0; at < body.size();) {
        const size_t next = body.find(kMistralCalls, at);
        const std::string piece = body.substr(at, next == std::string::npos ? next : next - at);
        const size_t args = piece.find(kMistralArgs);
        const std::string name(mistral_name(piece, args));
        calls.push_back({{"name", name}});
        if (args != std::string::npos && !name.empty())
          calls.back()["arguments"] = parse(piece.substr(args + kMistralArgs.size()));
        else
          calls.back() = nullptr;
        at = next == std::string::npos ? body.size() : next + kMistralCalls.size();
      }
    }
  } else {  // Llama 3: the whole answer is the call
    std::string_view body = tail;
    while (!body.empty() && (body.front() == ' ' || body.front() == '\n')) body.remove_prefix(1);
    if (body.starts_with(kPythonTag)) body.remove_prefix(kPythonTag.size());
    calls.push_back(parse(body));
  }
  // Every one a call, or none is: the model's own words after all.
  Delta probe;
  CallStream saved = calls_;
  bool ok = !calls.empty();
  for (const auto& c : calls) ok = ok && add_call(c, probe);
  if (!ok) {
    calls_ = std::move(saved);
    d.content += tail;
    return;
  }
  for (auto& c : probe.calls) d.calls.push_back(std::move(c));
}

// A tail as it arrives (Mistral, Llama 3): each call's first piece once its name and the
// opening of its arguments are read, then its arguments. A shape it does not know waits for
// read_tail() at the end.
void ChatOutput::stream_tail(Delta& d) {
  for (;;) {
    const std::string_view rest = std::string_view(call_).substr(fed_);
    const size_t first = rest.find_first_not_of(" \n");
    switch (tail_) {
      case Tail::start:
        if (first == std::string_view::npos) return;
        if (syntax_.calls == CallSyntax::mistral) {  // after [TOOL_CALLS]: a list or a name
          list_ = rest[first] == '[';
          fed_ += list_ ? first + 1 : first;
          tail_ = list_ ? Tail::item : Tail::name;
        } else if (rest.substr(first).starts_with(kPythonTag)) {
          fed_ += first + kPythonTag.size();
        } else {
          fed_ += first;
          tail_ = Tail::item;
        }
        continue;
      case Tail::name: {
        const size_t args = rest.find(kMistralArgs);
        if (args == std::string_view::npos) return;
        const std::string_view after = rest.substr(args + kMistralArgs.size());
        const size_t open = after.find_first_not_of(" \n");
        if (open == std::string_view::npos) return;
        const std::string_view name = mistral_name(rest, args);
        if (name.empty() || after[open] != '{') {
          tail_ = Tail::whole;
          return;
        }
        calls_.open(d.calls, std::string(name));
        fed_ += args + kMistralArgs.size();
        tail_ = Tail::args;
        continue;
      }
      case Tail::item:  // a call object, read from its first key
        calls_.close();
        tail_ = Tail::args;
        continue;
      case Tail::args: {
        calls_.feed(d.calls, rest);
        fed_ = call_.size();
        const CallReader& r = calls_.reader();
        if (r.state() == CallReader::State::other) tail_ = Tail::whole;
        if (r.state() != CallReader::State::done) return;
        fed_ -= r.rest().size();
        calls_.close();
        tail_ = syntax_.calls == CallSyntax::llama3 ? Tail::done
                : list_                             ? Tail::item_end
                                                    : Tail::piece_end;
        continue;
      }
      case Tail::item_end: {  // "}" closes the call object, then "," or "]"
        if (first == std::string_view::npos) return;
        const size_t sep = rest.find_first_not_of(" \n", first + 1);
        if (rest[first] != '}' || sep == std::string_view::npos) {
          tail_ = rest[first] != '}' ? Tail::done : tail_;
          return;
        }
        tail_ = rest[sep] == ',' ? Tail::item : Tail::done;
        fed_ += sep + 1;
        continue;
      }
      case Tail::piece_end: {
        const size_t next = rest.find(kMistralCalls);
        if (next == std::string_view::npos) return;
        fed_ += next + kMistralCalls.size();
        tail_ = Tail::name;
        continue;
      }
      default:
        return;
    }
  }
}

// The calls run to the end of the answer, from here (after a Mistral [TOOL_CALLS] of tag_size).
void ChatOutput::enter_tail(size_t tag_size) {
  state_ = State::tail;
  tail_ = Tail::start;
  fed_ = tag_size;
  list_ = false;
  calls_at_tail_ = calls_.count();
}

// A DeepSeek call as it arrives: its first piece once the name and the opening brace of its
// arguments are read, then its arguments.
void ChatOutput::stream_deepseek(Delta& d) {
  if (!calls_.started()) {
    if (tail_ == Tail::whole) return;
    std::string name;
    const Head h = deepseek_head(call_, name, fed_);
    if (h == Head::mismatch) tail_ = Tail::whole;
    if (h != Head::ok) return;
    calls_.open(d.calls, std::move(name));
  }
  calls_.feed(d.calls, std::string_view(call_).substr(fed_));
  fed_ = call_.size();
}

void ChatOutput::emit(Delta& d, std::string_view text) {
  said_ = said_ || text.find_first_not_of(" \n") != std::string_view::npos;
  d.content += text;
}

// A call's end: a streamed call is complete; any other is read whole now, and what is not a
// call stays text.
void ChatOutput::close_call(Delta& d) {
  const bool streamed = calls_.started();
  if (syntax_.calls == CallSyntax::deepseek) {
    if (!streamed && !add_call(deepseek_call(call_), d))
      d.content += std::string(kDsCallBegin) + call_ + std::string(kDsCallEnd);
    state_ = State::deepseek;
  } else {
    if (streamed || add_call(parse(call_), d))
      trim_newlines_ = true;
    else
      d.content += std::string(kCallOpen) + call_ + std::string(kCallClose);
    state_ = State::content;
  }
  call_.clear();
  fed_ = 0;
  tail_ = Tail::start;
  calls_.close();
}

// Inside a call: its text up to the closing tag, its arguments streamed. False: wait for more
// text.
bool ChatOutput::step_call(Delta& d, bool final) {
  const std::string_view close = syntax_.calls == CallSyntax::deepseek ? kDsCallEnd : kCallClose;
  bool whole = false;
  const size_t cut = tag_or_prefix(buf_, close, whole);
  const bool ends = cut != std::string::npos && (whole || !final);
  const std::string body = buf_.substr(0, ends ? cut : buf_.size());
  buf_.erase(0, body.size());
  call_ += body;
  if (syntax_.calls == CallSyntax::deepseek)
    stream_deepseek(d);
  else
    calls_.feed(d.calls, body);
  if (!ends || !whole) return false;
  buf_.erase(0, close.size());
  close_call(d);
  return true;
}

// Between DeepSeek's calls: the next <｜tool▁call▁begin｜>, or the block's end.
bool ChatOutput::step_deepseek(Delta& d, bool final) {
  bool whole_call = false, whole_end = false;
  const size_t call = tag_or_prefix(buf_, kDsCallBegin, whole_call);
  const size_t end = tag_or_prefix(buf_, kDsCallsEnd, whole_end);
  const size_t cut = std::min(call, end);
  if (cut == std::string::npos || (final && !whole_call && !whole_end)) {
    emit(d, trim(buf_));  // no more calls: anything said here is content
    buf_.clear();
    return false;
  }
  emit(d, trim(std::string_view(buf_).substr(0, cut)));
  const bool is_call = cut == call && whole_call;
  if (!is_call && !(cut == end && whole_end)) {
    buf_.erase(0, cut);
    return false;
  }
  buf_.erase(0, cut + (is_call ? kDsCallBegin : kDsCallsEnd).size());
  state_ = is_call ? State::call : State::content;
  trim_newlines_ = !is_call;
  return true;
}

// Inside a DSML block: each invoke goes out as one call once it is whole. At the block's end
// (or the text's), a block that gave no call is the text it was.
bool ChatOutput::step_dsml(Delta& d, bool final) {
  call_ += buf_;
  buf_.clear();
  dsml::Call c;
  dsml::Next next = dsml::Next::more;
  while (tail_ != Tail::whole && (next = dsml::next_invoke(call_, fed_, c)) == dsml::Next::call)
    calls_.add(d.calls, std::move(c.name), std::move(c.arguments));
  if (next == dsml::Next::other) tail_ = Tail::whole;  // no more invokes: wait for the end
  const size_t end = call_.find(dsml::kCallsClose, fed_);
  if (end == std::string::npos && !final) return false;
  const size_t stop = end == std::string::npos ? call_.size() : end + dsml::kCallsClose.size();
  if (calls_.count() == calls_at_tail_)
    d.content += std::string(dsml::kCallsOpen) + call_.substr(0, stop);
  buf_ = call_.substr(stop);
  call_.clear();
  fed_ = 0;
  tail_ = Tail::start;
  state_ = State::content;
  trim_newlines_ = true;
  return !buf_.empty();
}

void ChatOutput::step(Delta& d, bool final) {
  for (;;) {
    if (state_ == State::content && trim_newlines_) {
      const size_t n = buf_.find_first_not_of('\n');
      buf_.erase(0, n == std::string::npos ? buf_.size() : n);
      if (buf_.empty()) return;
      trim_newlines_ = false;
    }
    if (state_ == State::tail) {
      call_ += buf_;
      buf_.clear();
      stream_tail(d);
      return;
    }
    if (state_ == State::call) {
      if (!step_call(d, final)) return;
      continue;
    }
    if (state_ == State::deepseek) {
      if (!step_deepseek(d, final)) return;
      continue;
    }
    if (state_ == State::dsml) {
      if (!step_dsml(d, final)) return;
      continue;
    }
    if (state_ == State::content && syntax_.calls == CallSyntax::llama3 && !said_) {
      // An answer whose first word is a JSON object or <|python_tag|> is a call, read whole at
      // the end; anything else is content from here on.
      const size_t first = buf_.find_first_not_of(" \n");
      if (first == std::string::npos && !final) return;
      if (first != std::string::npos) {
        const std::string_view rest = std::string_view(buf_).substr(first);
        const bool may_tag = kPythonTag.starts_with(rest.substr(0, kPythonTag.size()));
        if (rest.front() == '{' || (may_tag && rest.size() >= kPythonTag.size())) {
          enter_tail(0);
          continue;
        }
        if (may_tag && !final) return;
      }
      said_ = true;  // plain words first: no call
    }
    if (state_ == State::content) {
      // The earliest tag this syntax knows, or a tail that may become one.
      std::vector<std::string_view> tags;
      if (syntax_.think) tags.push_back(syntax_.think_open);
      if (syntax_.calls == CallSyntax::hermes) tags.push_back(kCallOpen);
      if (syntax_.calls == CallSyntax::mistral) tags.push_back(kMistralCalls);
      if (syntax_.calls == CallSyntax::deepseek) tags.push_back(kDsCallsBegin);
      if (syntax_.calls == CallSyntax::dsml) tags.push_back(dsml::kCallsOpen);
      const auto [cut, tag, whole] = earliest_tag(buf_, tags);
      if (cut == std::string::npos || (!whole && final)) {
        emit(d, buf_);
        buf_.clear();
        return;
      }
      emit(d, buf_.substr(0, cut));
      if (!whole) {
        buf_.erase(0, cut);
        return;
      }
      if (tag == kMistralCalls) {  // the calls run to the end: kept with their tag
        buf_.erase(0, cut);
        enter_tail(kMistralCalls.size());
        continue;
      }
      buf_.erase(0, cut + tag.size());
      if (tag == dsml::kCallsOpen) calls_at_tail_ = calls_.count();
      state_ = tag == syntax_.think_open ? State::reasoning
               : tag == kCallOpen        ? State::call
               : tag == kDsCallsBegin    ? State::deepseek
                                         : State::dsml;
      continue;
    }
    // reasoning
    bool whole = false;
    const size_t cut = tag_or_prefix(buf_, syntax_.think_close, whole);
    if (cut == std::string::npos || (!whole && final)) {
      d.reasoning += buf_;
      buf_.clear();
      return;
    }
    d.reasoning += buf_.substr(0, cut);
    if (!whole) {
      buf_.erase(0, cut);
      return;
    }
    buf_.erase(0, cut + syntax_.think_close.size());
    trim_newlines_ = true;
    state_ = State::content;
  }
}

}  // namespace sy::server
