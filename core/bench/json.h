// A small streaming JSON writer: objects and arrays nest, commas and indentation are automatic,
// non-finite numbers become null (JSON has no NaN or infinity).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy::bench {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  // `inline_items`: the whole array on one line (number series).
  JsonWriter& begin_array(bool inline_items = false) { return open('[', inline_items); }
  JsonWriter& end_array() { return close(']'); }
  JsonWriter& key(std::string_view k) {
    item();
    quote(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(double v) {
    item();
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", v);
      out_ += buf;
    }
    return *this;
  }
  JsonWriter& value(int v) { return integer(v); }
  JsonWriter& value(uint32_t v) { return integer(v); }
  JsonWriter& value(int64_t v) { return integer(v); }
  JsonWriter& value(uint64_t v) { return integer(static_cast<int64_t>(v)); }
  JsonWriter& value(bool v) {
    item();
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    item();
    quote(s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& null() {
    item();
    out_ += "null";
    return *this;
  }
  template <typename T>
  JsonWriter& value(const std::optional<T>& v) {
    return v ? value(*v) : null();
  }
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }
  const std::string& str() const { return out_; }

 private:
  struct Level {
    bool first = true, inline_items = false;
  };
  JsonWriter& integer(int64_t v) {
    item();
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& open(char c, bool inline_items = false) {
    item();
    out_ += c;
    stack_.push_back({true, inline_items || (!stack_.empty() && stack_.back().inline_items)});
    return *this;
  }
  JsonWriter& close(char c) {
    const Level l = stack_.back();
    stack_.pop_back();
    if (!l.first && !l.inline_items) newline();
    out_ += c;
    if (stack_.empty()) out_ += '\n';
    return *this;
  }
  // Comma and line break before a new element, unless it is the value after a key.
  void item() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (stack_.empty()) return;
    Level& l = stack_.back();
    if (!l.first) out_ += l.inline_items ? ", " : ",";
    if (!l.inline_items) newline();
    l.first = false;
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * stack_.size(), ' ');
  }
  void quote(std::string_view s) {
    out_ += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
  }
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
};

}  // namespace sy::bench
