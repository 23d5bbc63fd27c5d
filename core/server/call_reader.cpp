#include "server/call_reader.h"

#include <nlohmann/json.hpp>

namespace sy::server {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

}  // namespace

CallReader::CallReader(Shape shape)
    : shape_(shape), state_(shape == Shape::object ? State::header : State::args) {}

std::string CallReader::feed(std::string_view text) {
  text_ += text;
  if (state_ == State::header) {
    const Header h = read_header();
    if (h == Header::need_more) return {};
    if (h == Header::mismatch) {
      state_ = State::other;
      return {};
    }
    state_ = State::args;
  }
  return state_ == State::args ? read_args() : std::string();
}

// {"name": "<name>", "arguments": followed by '{': spaces anywhere JSON allows them.
CallReader::Header CallReader::read_header() {
  size_t p = 0;
  const std::string_view t = text_;
  auto skip = [&] {
    while (p < t.size() && is_space(t[p])) ++p;
    return p < t.size();
  };
  auto expect = [&](char c) -> Header {
    if (!skip()) return Header::need_more;
    return t[p] == c ? (++p, Header::ok) : Header::mismatch;
  };
  // A JSON string literal, decoded into `out`.
  auto string = [&](std::string& out) -> Header {
    if (!skip()) return Header::need_more;
    if (t[p] != '"') return Header::mismatch;
    size_t q = p + 1;
    for (bool esc = false; q < t.size(); ++q) {
      if (esc)
        esc = false;
      else if (t[q] == '\\')
        esc = true;
      else if (t[q] == '"')
        break;
    }
    if (q >= t.size()) return Header::need_more;
    const auto j = nlohmann::json::parse(t.substr(p, q + 1 - p), nullptr, false);
    if (!j.is_string()) return Header::mismatch;
    out = j.get<std::string>();
    p = q + 1;
    return Header::ok;
  };
  std::string key, name;
  for (Header h : {expect('{'), string(key)})
    if (h != Header::ok) return h;
  if (key != "name") return Header::mismatch;
  for (Header h : {expect(':'), string(name), expect(','), string(key)})
    if (h != Header::ok) return h;
  if (key != "arguments" && key != "parameters") return Header::mismatch;
  if (Header h = expect(':'); h != Header::ok) return h;
  if (!skip()) return Header::need_more;
  if (t[p] != '{') return Header::mismatch;  // e.g. arguments as a string: read whole
  name_ = std::move(name);
  pos_ = p;
  return Header::ok;
}

std::string CallReader::read_args() {
  std::string out;
  for (; pos_ < text_.size(); ++pos_) {
    const char c = text_[pos_];
    if (raw_) {
      out += c;
      continue;
    }
    if (in_string_) {
      out += c;
      if (escape_)
        escape_ = false;
      else if (c == '\\')
        escape_ = true;
      else if (c == '"')
        in_string_ = false;
      continue;
    }
    if (is_space(c)) continue;
    if (depth_ == 0 && c != '{' && c != '[') raw_ = true;  // not JSON: the text as it is
    out += c;
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if ((c == '}' || c == ']') && --depth_ == 0) {
      ++pos_;
      state_ = State::done;
      break;
    }
  }
  return out;
}

void merge_calls(std::vector<ToolCall>& into, std::vector<ToolCall>&& pieces) {
  for (ToolCall& c : pieces) {
    if (c.id.empty() && !into.empty() && into.back().index == c.index)
      into.back().arguments += c.arguments;
    else
      into.push_back(std::move(c));
  }
}

void CallStream::add(std::vector<ToolCall>& out, std::string name, std::string arguments) {
  out.push_back({n_, prefix_ + std::to_string(n_), std::move(name), std::move(arguments)});
  ++n_;
}

void CallStream::open(std::vector<ToolCall>& out, std::string name) {
  reader_ = CallReader(CallReader::Shape::arguments);
  announced_ = true;
  add(out, std::move(name), "");
}

void CallStream::feed(std::vector<ToolCall>& out, std::string_view text) {
  if (reader_.state() == CallReader::State::other) return;
  std::string piece = reader_.feed(text);
  if (reader_.started() && !announced_) {
    announced_ = true;
    add(out, reader_.name(), "");
  }
  if (!piece.empty()) out.push_back({n_ - 1, "", "", std::move(piece)});
}

}  // namespace sy::server
