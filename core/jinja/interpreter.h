// Runs a parsed template: scopes as Jinja2 keeps them (a loop iteration and a macro call get
// their own; if and set do not), loop controls, macros and call blocks, within limits on time,
// output size and call depth.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jinja/ast.h"
#include "jinja/call.h"

namespace sy::jinja {

struct Limits {
  size_t max_output = size_t{16} << 20;  // bytes of render, and of any one string built
  // Expressions and statements evaluated, plus the size of what each reads and builds (a step
  // per list item or 64 bytes of string, Value::weight): about a quarter second of rendering.
  uint64_t max_steps = 5'000'000;
  int max_depth = 64;  // macro calls within macro calls
};

struct Frame {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Frame> parent;
};

class Interpreter {
 public:
  // globals: the render's variables (messages, tools, ...), below the built-in globals.
  Interpreter(const Limits& limits, std::shared_ptr<Frame> globals);
  // Breaks the cycles a render can make, which shared ownership alone never frees: a macro kept
  // in the frame it closes over, a namespace that holds itself.
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // Throws Error naming the line where it failed.
  Text render(const Body& body);

  // For built-ins that call back: map('upper'), select('odd'), a macro passed as a value.
  Value filter(std::string_view name, const Value& operand, Call& c);
  bool test(std::string_view name, const Value& operand, Call& c);
  const Limits& limits() const { return limits_; }
  // Throws Error when a string or list of this many bytes or items would pass the limits.
  void check_size(size_t n) const;

 private:
  enum class Flow { normal, stop, skip };

  // `f` is the current scope until the guard goes, an Error included.
  class Scope {
   public:
    Scope(Interpreter& in, std::shared_ptr<Frame> f) : in_(in), saved_(std::move(in.frame_)) {
      in.frame_ = std::move(f);
    }
    ~Scope() { in_.frame_ = std::move(saved_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Interpreter& in_;
    std::shared_ptr<Frame> saved_;
  };
  // A new scope inside the current one.
  std::shared_ptr<Frame> inner() const;

  Flow exec(const Body& b);
  Flow exec(const Stmt& s);
  Flow loop(const Stmt& s);
  Value eval(const Expr& e);
  Value binary(const Expr& e);
  bool compare(const std::string& op, const Value& l, const Value& r, int line);
  Value call(const Expr& e, const Value* caller);
  Value call_macro(const Stmt& m, size_t first_param, const std::shared_ptr<Frame>& closure,
                   Call& c);
  Value chain(const Expr& f, Value operand);
  Value lookup(const std::string& name) const;
  Value attribute(const Value& obj, const std::string& name, const Expr& at);
  Value item(const Value& obj, const Value& index, const Expr& at);
  Text capture(const Body& b);
  void emit(const Text& t);
  void step();
  // Counts the work an operation did on v (Value::weight) against max_steps.
  const Value& charge(const Value& v);
  Value macro_value(const Stmt& m, size_t first_param);
  Call arguments(const Args& a, std::string_view name);

  Limits limits_;
  std::shared_ptr<Frame> frame_;
  Text* out_ = nullptr;
  uint64_t steps_ = 0;
  int depth_ = 0;
  int line_ = 0;
  // What may close a cycle: the frames macros closed over, the namespaces assigned into.
  std::vector<std::weak_ptr<Frame>> closures_;
  std::vector<std::weak_ptr<Object>> spaces_;
};

// The expression as source-like text, for messages: messages[0].content.
std::string describe(const Expr& e);

}  // namespace sy::jinja
