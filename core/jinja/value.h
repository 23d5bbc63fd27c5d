// The values a template computes with, as Python's Jinja2 sees them: undefined, None, bool, int,
// float, str, list, dict (insertion-ordered), callables and namespaces. Lists and dicts are shared
// and immutable once built (transformers renders in Jinja2's immutable sandbox); a namespace is
// the one mutable object.
//
// Strings remember which of their bytes came from the caller's data (messages, tools, kwargs)
// rather than from the template's own text: the engine parses control tokens only in the rest
// (text::Tokenizer::encode with trusted spans), so a message cannot forge the template's markup.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sy::jinja {

// A byte range [begin, end) of a Text.
struct Span {
  uint32_t begin = 0, end = 0;
};

// UTF-8 bytes and the ranges of them that came from data, sorted and disjoint.
struct Text {
  std::string bytes;
  std::vector<Span> data;

  Text() = default;
  explicit Text(std::string b, bool from_data = false);
  void append(const Text& t);
  void append(std::string_view literal) { bytes += literal; }
  void append_data(std::string_view b);
  bool tainted() const { return !data.empty(); }
  // Bytes [pos, pos + len) with their ranges.
  Text sub(size_t pos, size_t len = std::string::npos) const;
  // The same ranges over new bytes of the same length (ASCII case mapping).
  Text with_bytes(std::string b) const;
};

class Value;
struct Object;
struct Call;
using List = std::vector<Value>;
using Function = std::function<Value(Call&)>;

enum class Kind : uint8_t {
  undefined,
  none,
  boolean,
  integer,
  real,
  string,
  list,
  dict,
  function,
  space
};

class Value {
 public:
  Value() = default;  // undefined
  static Value none();
  Value(bool b);
  Value(int64_t i);
  Value(int i) : Value(static_cast<int64_t>(i)) {}
  Value(double d);
  Value(Text t);
  Value(std::string s, bool from_data = false) : Value(Text(std::move(s), from_data)) {}
  Value(const char* s) : Value(std::string(s)) {}
  static Value list(List items);
  // (a, b): a list that prints as a tuple.
  static Value tuple(List items);
  // What select, reject and map return: a list that prints as a generator and that tojson and
  // length refuse, as Jinja2's lazy results are; |list makes it a list.
  static Value generator(List items);
  // Markup (|safe, |escape): a str that HTML-escapes a plain str added to it, as Python's
  // markupsafe does.
  static Value markup(Text t);
  static Value dict(std::shared_ptr<Object> o);
  static Value function(std::string name, Function f);
  static Value space(std::shared_ptr<Object> o);  // namespace()

  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_number() const {
    return kind_ == Kind::boolean || kind_ == Kind::integer || kind_ == Kind::real;
  }
  bool is_mapping() const { return kind_ == Kind::dict || kind_ == Kind::space; }
  bool is_tuple() const { return shape_ == Shape::tuple; }
  bool is_generator() const { return shape_ == Shape::generator; }
  bool is_markup() const { return shape_ == Shape::markup; }

  bool boolean() const { return b_; }
  int64_t integer() const;  // bool, int, or a float truncated
  double real() const;      // bool, int or float
  const Text& text() const { return *s_; }
  const std::string& str() const { return s_->bytes; }
  const List& items() const { return *l_; }
  Object& object() const { return *o_; }
  const std::shared_ptr<Object>& object_ptr() const { return o_; }
  const std::string& function_name() const;
  Value call(Call& c) const;

  bool truthy() const;
  // The same shared string, list or dict (not a copy of it).
  bool same(const Value& o) const {
    return kind_ == o.kind_ && ((s_ && s_ == o.s_) || (l_ && l_ == o.l_) || (o_ && o_ == o.o_));
  }
  // What an operation reading or building this value costs, in steps: a step per 64 bytes of a
  // string, per item of a list or dict.
  uint64_t weight() const;
  // Python's type name (for messages): 'str', 'dict', 'undefined', ...
  std::string_view type_name() const;

 private:
  enum class Shape : uint8_t { plain, tuple, generator, markup };
  Kind kind_ = Kind::undefined;
  Shape shape_ = Shape::plain;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::shared_ptr<const Text> s_;
  std::shared_ptr<const List> l_;
  std::shared_ptr<Object> o_;
  std::shared_ptr<const std::pair<std::string, Function>> f_;
};

// A dict: keys in insertion order, looked up by their text. data_keys: the keys came from the
// caller's data. keys: each entry's key as written when some key is not a string ({4096: 512}),
// else empty.
struct Object {
  std::vector<std::pair<std::string, Value>> entries;
  bool data_keys = false;
  std::vector<Value> keys;

  const Value* find(std::string_view key) const;
  void set(std::string key, Value v);
  // The i-th entry's key: as written, or a string.
  Value key(size_t i) const;
};

// Python's ==, as Jinja2 compares.
bool equal(const Value& a, const Value& b);
// Python's <; throws Error when the types do not order.
bool less(const Value& a, const Value& b);

// str(v) as Jinja2 prints it ({{ v }}): None, True, 1.5, [1, 'a'], {'k': 2}; undefined is "".
// Throws Error once the text passes `limit` bytes (a list repeating one long string is cheap to
// build and huge to print); kMaxText where no render's limit is at hand.
inline constexpr size_t kMaxText = size_t{16} << 20;
Text to_text(const Value& v, size_t limit = kMaxText);
// Python's repr of a float: shortest round trip, "1.0", "1e+20", "inf".
std::string float_repr(double d);

}  // namespace sy::jinja
