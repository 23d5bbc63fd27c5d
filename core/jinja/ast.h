// The parsed template: expressions and statements as Jinja2's parser builds them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace sy::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Args {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

enum class ExprKind {
  literal,
  name,
  list,
  tuple,
  dict,
  attr,
  item,
  slice,
  unary,
  binary,
  compare,
  cond,
  filter,
  test,
  call
};

// kids by kind: list/tuple: the items; dict: key, value, key, value...; attr: object (name is the
// attribute); item: object, index; slice: object, start, stop, step (each may be null); unary:
// operand (name is "-", "+" or "not"); binary: left, right (name is the operator: "+", "and",
// "and", "or"); compare: the operands of a chain (a < b <= c), ops between them; cond: then, test,
// else (may be null); filter/test: operand (null for a filter block's filter), name is the filter
// or test; call: the callee.
struct Expr {
  ExprKind kind;
  int line;
  std::string name;
  Value value;  // literal
  std::vector<ExprPtr> kids;
  std::vector<std::string> ops;  // compare: "==", "<", "in", "not in", ...
  Args args;                     // filter, test, call
  bool negated = false;          // test: "is not"
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

enum class StmtKind {
  text,
  print,
  branch,
  loop,
  set,
  set_block,
  macro,
  call_block,
  filter_block,
  scope,
  loop_break,
  loop_continue
};

// exprs by kind: print: the value; branch: one condition per branch (the else branch has none);
// loop: the iterable, then the filter (may be null); set: the value; scope ({% with %}): one
// value per name; call_block: the call;
// filter_block: the filter chain (innermost operand null).
// bodies: branch: one per branch; loop: body, else; set_block, macro, call_block, filter_block,
// scope: the body.
// names: loop and set: the targets (set with attribute: the namespace, then the attribute);
// set_block: the target; scope: the names it sets; macro: its name, then its parameters;
// call_block: the caller's parameters.
// defaults: macro and call_block: one per parameter (null: none).
struct Stmt {
  StmtKind kind;
  int line;
  std::string text;
  std::vector<ExprPtr> exprs;
  std::vector<Body> bodies;
  std::vector<std::string> names;
  std::vector<ExprPtr> defaults;
  bool attribute = false;  // set: "ns.attr = ..."
  bool varargs = false;    // macro, call_block: the body reads varargs (extra positionals allowed)
  bool kwargs = false;     // ... reads kwargs (unknown keywords allowed)
};

}  // namespace sy::jinja
