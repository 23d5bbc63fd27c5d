// The grammar layer: GBNF parsed as llama.cpp reads it (matching exactly the strings the grammar
// describes), its errors naming line and column or the rule, JSON schemas whose grammar takes
// every valid instance listed and refuses every invalid one, and the vocabulary trie's mask equal
// to checking each token on its own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "grammar/gbnf.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/token_trie.h"

namespace sy::grammar {
namespace {

using json = nlohmann::ordered_json;

std::shared_ptr<const Grammar> compile(const std::string& gbnf) {
  return std::make_shared<const Grammar>(parse_gbnf(gbnf));
}

// The whole text is a sentence of the grammar.
bool matches(Matcher& m, const std::string& text) {
  ByteState s{m.start(), 0, 0};
  s = TokenTrie::feed(m, s, text);
  return s.set != Matcher::kDead && s.need == 0 && m.accepting(s.set);
}

bool matches(const std::string& gbnf, const std::string& text) {
  Matcher m(compile(gbnf));
  return matches(m, text);
}

std::string error_of(const std::string& gbnf, const Limits& limits = {}) {
  try {
    parse_gbnf(gbnf, limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Gbnf, LiteralsClassesAndAlternatives) {
  const std::string g = R"(root ::= "ab" [c-e] | "x" [^a-z] .)";
  EXPECT_TRUE(matches(g, "abd"));
  EXPECT_TRUE(matches(g, "abe"));
  EXPECT_FALSE(matches(g, "abf"));
  EXPECT_FALSE(matches(g, "ab"));
  EXPECT_TRUE(matches(g, "xA!"));
  EXPECT_TRUE(matches(g, "x9é"));
  EXPECT_FALSE(matches(g, "xa!"));
  EXPECT_FALSE(matches(g, "abdd"));
}

TEST(Gbnf, Repetitions) {
  EXPECT_TRUE(matches(R"(root ::= "a"*)", ""));
  EXPECT_TRUE(matches(R"(root ::= "a"*)", "aaaa"));
  EXPECT_FALSE(matches(R"(root ::= "a"+)", ""));
  EXPECT_TRUE(matches(R"(root ::= "a"+ "b"?)", "aab"));
  EXPECT_FALSE(matches(R"(root ::= "a"+ "b"?)", "aabb"));
  const std::string bounded = R"(root ::= ("ab"){2,3})";
  EXPECT_FALSE(matches(bounded, "ab"));
  EXPECT_TRUE(matches(bounded, "abab"));
  EXPECT_TRUE(matches(bounded, "ababab"));
  EXPECT_FALSE(matches(bounded, "abababab"));
  EXPECT_TRUE(matches(R"(root ::= [0-9]{3})", "123"));
  EXPECT_FALSE(matches(R"(root ::= [0-9]{3})", "12"));
  EXPECT_TRUE(matches(R"(root ::= "x"{2,})", "xxxxx"));
  EXPECT_FALSE(matches(R"(root ::= "x"{2,})", "x"));
  EXPECT_TRUE(matches(R"(root ::= "x"{,2})", ""));
  EXPECT_FALSE(matches(R"(root ::= "x"{,2})", "xxx"));
}

TEST(Gbnf, RulesCommentsNewlinesAndEscapes) {
  const std::string g =
      "# a list of words\n"
      "root ::= word (\"\\n\" word)*   # newline separated\n"
      "word ::= (\n"
      "  [a-z]+ |\n"
      "  \"\\x41\\u00e9\\\"\"\n"
      ")\n";
  EXPECT_TRUE(matches(g, "abc\nxyz"));
  EXPECT_TRUE(matches(g, "Aé\""));
  EXPECT_FALSE(matches(g, "abc xyz"));
}

TEST(Gbnf, RecursionBalancedBrackets) {
  const std::string g = R"g(root ::= "(" root ")" root | )g";
  EXPECT_TRUE(matches(g, "(()(()))"));
  EXPECT_FALSE(matches(g, "(()"));
  EXPECT_FALSE(matches(g, "())"));
}

TEST(Gbnf, ErrorsNameWhereAndWhat) {
  EXPECT_EQ(error_of("root ::= foo"), "grammar line 1 column 10: undefined rule 'foo'");
  EXPECT_EQ(error_of("item ::= \"a\""), "the grammar has no rule 'root'");
  EXPECT_EQ(error_of("root ::= \"abc"), "grammar line 1 column 14: unterminated literal");
  EXPECT_EQ(error_of("root ::= [a-"), "grammar line 1 column 13: unterminated character class");
  EXPECT_EQ(error_of("root ::= \"\\q\""), "grammar line 1 column 12: unknown escape '\\q'");
  EXPECT_EQ(error_of("root ::= [z-a]"),
            "grammar line 1 column 14: character range is out of order");
  EXPECT_EQ(error_of("root ::= \"a\"{3,1}"),
            "grammar line 1 column 18: repetition bounds out of order");
  EXPECT_EQ(error_of("root ::= \"a\"{99999}"),
            "grammar line 1 column 14: repetition bound above 10000");
  EXPECT_EQ(error_of("root ::= * \"a\""), "grammar line 1 column 10: '*' follows no symbol");
  EXPECT_EQ(error_of("\nroot ::= \"a\"\nroot ::= \"b\""),
            "grammar line 3 column 1: rule 'root' is defined twice");
  EXPECT_EQ(error_of("root = \"a\""), "grammar line 1 column 6: expected ::= after 'root'");
  EXPECT_EQ(error_of("root ::= \"a\" )"), "grammar line 1 column 14: unexpected ')'");
  EXPECT_EQ(error_of("root ::= root \"a\" | \"b\""),
            "rule 'root' is left-recursive: it can reach itself without consuming a character");
  EXPECT_EQ(error_of("root ::= x \"a\"\nx ::= \"\" | root"),
            "rule 'root' is left-recursive: it can reach itself without consuming a character");
  EXPECT_EQ(error_of("root ::= (\"a\"?)*"),
            "rule 'root_4' is left-recursive: it can reach itself without consuming a character");
  EXPECT_EQ(error_of("root ::= \"\\xzz\""), "grammar line 1 column 13: expected a hex digit");
  EXPECT_EQ(error_of(std::string("root ::= \"\xff\"")), "grammar line 1 column 11: invalid UTF-8");
}

TEST(Gbnf, SizeAndNestingAreBounded) {
  // Repetitions share one helper rule per symbol, so a bound costs its count, not a copy each.
  EXPECT_EQ(error_of("root ::= (\"a\"{10000}){10000}"), "(no error)");
  Limits small;
  small.max_elements = 100;
  EXPECT_EQ(error_of("root ::= \"a\"{50} \"b\"{50}", small),
            "grammar line 1 column 25: the grammar grows past 100 elements");
  EXPECT_EQ(error_of("root ::= " + std::string(300, '(') + "\"a\"" + std::string(300, ')')),
            "grammar line 1 column 211: groups nest deeper than 200");
}

TEST(Matcher, AmbiguityIsBoundedNotHung) {
  // 2^n parses of "aaaa..." would be alive at once without interning; with it, a handful.
  Matcher m(compile(R"(root ::= ("a" | "a" "a")* "b")"));
  EXPECT_TRUE(matches(m, std::string(200, 'a') + "b"));
}

TEST(Matcher, PartialUtf8MustStayCompletable) {
  Matcher m(compile(R"(root ::= [a-z] "é")"));
  ByteState s = TokenTrie::feed(m, {m.start(), 0, 0}, "x\xc3");
  ASSERT_NE(s.set, Matcher::kDead);
  EXPECT_EQ(s.need, 1);
  EXPECT_EQ(TokenTrie::feed(m, s, "\xa9").set != Matcher::kDead, true);           // é
  EXPECT_EQ(TokenTrie::feed(m, s, "\xa8").set, Matcher::kDead);                   // è
  EXPECT_EQ(TokenTrie::feed(m, {m.start(), 0, 0}, "x\xe2").set, Matcher::kDead);  // 3-byte lead
}

TEST(Matcher, OnlyShortestFormUtf8) {
  Matcher m(compile(R"(root ::= [^a] [^a])"));
  const ByteState start{m.start(), 0, 0};
  EXPECT_EQ(TokenTrie::feed(m, start, "\xc3\xa9\xe2\x82\xac").set != Matcher::kDead, true);
  EXPECT_EQ(TokenTrie::feed(m, start, "\xe0\x81\xbb").set, Matcher::kDead);  // overlong '{'
  EXPECT_EQ(TokenTrie::feed(m, start, "\xc1").set, Matcher::kDead);          // overlong lead
  EXPECT_EQ(TokenTrie::feed(m, start, "\xed\xa0\x80").set, Matcher::kDead);  // a surrogate
  EXPECT_EQ(TokenTrie::feed(m, start, "\xf4\x90").set, Matcher::kDead);      // past U+10FFFF
  EXPECT_EQ(TokenTrie::feed(m, start, "\xf0\x9f\x98\x80").set != Matcher::kDead, true);
}

// JSON Schema: (schema, instances it must take, instances it must refuse).
struct SchemaCase {
  json schema;
  std::vector<std::string> valid, invalid;
};

TEST(JsonSchema, GrammarTakesValidInstancesAndRefusesInvalidOnes) {
  const std::vector<SchemaCase> cases = {
      {json::parse(R"({"type": "object", "properties": {"name": {"type": "string"},
          "age": {"type": "integer"}}, "required": ["name", "age"], "additionalProperties": false})"),
       {R"({"name": "Ann", "age": 31})", R"({"name":"B\"o\u00e9","age":-2})",
        "{\n  \"name\": \"x\",\n  \"age\": 0\n}"},
       {R"({"age": 31, "name": "Ann"})", R"({"name": "Ann"})", R"({"name": "Ann", "age": 3.5})",
        R"({"name": "Ann", "age": 31, "x": 1})", R"({"name": 5, "age": 31})",
        R"({"name": "Ann", "age": 012})", "{\"name\": \"a\nb\", \"age\": 1}"}},
      {json::parse(R"({"type": "object", "properties": {"a": {"type": "boolean"},
          "b": {"type": "null"}, "c": {"type": "number"}}})"),
       {"{}", R"({"a": true})", R"({"b": null})", R"({"c": 1.5e3})", R"({"a": false, "c": -0.25})",
        R"({"a": true, "b": null, "c": 2})"},
       {R"({"b": null, "a": true})", R"({, "a": true})", R"({"a": true,})", R"({"c": 1.})",
        R"({"a": 1})"}},
      {json::parse(R"({"type": "array", "items": {"enum": ["red", "green", 3]},
          "minItems": 1, "maxItems": 3})"),
       {R"(["red"])", R"(["green", 3, "red"])"},
       {"[]", R"(["blue"])", R"(["red", "red", "red", "red"])"}},
      {json::parse(R"({"anyOf": [{"type": "string", "maxLength": 3}, {"const": {"k": [1, 2]}}]})"),
       {R"("abc")", R"("")", R"({"k":[1,2]})"},
       {R"("abcd")", R"({"k": [1, 2]})"}},
      {json::parse(R"({"$defs": {"node": {"type": "object", "properties": {
          "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
          "required": ["children"]}}, "$ref": "#/$defs/node"})"),
       {R"({"children": []})", R"({"children": [{"children": [{"children": []}]}]})"},
       {R"({"children": [{}]})"}},
      {json::parse(R"({"type": "string", "format": "date-time"})"),
       {R"("2026-12-07T11:30:00Z")", R"("2026-01-31T23:59:59.5+01:00")"},
       {R"("2026-13-07T11:30:00Z")", R"("yesterday")"}},
      {json::parse(R"({"type": ["integer", "null"]})"), {"7", "null"}, {"\"7\"", "7.5"}},
      {json::parse(R"({"type": "object", "additionalProperties": {"type": "integer"}})"),
       {"{}", R"({"x": 1, "y": 2})"},
       {R"({"x": "1"})"}},
      {json::parse(
           R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})"),
       {R"(["a", 1])"},
       {R"(["a"])", R"([1, "a"])", R"(["a", 1, 2])"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.schema.dump());
    const std::string gbnf = json_schema_gbnf(c.schema);
    SCOPED_TRACE(gbnf);
    Matcher m(compile(gbnf));
    for (const auto& v : c.valid) EXPECT_TRUE(matches(m, v)) << v;
    for (const auto& v : c.invalid) EXPECT_FALSE(matches(m, v)) << v;
  }
}

TEST(JsonSchema, JsonObjectTakesAnyObjectOnly) {
  Matcher m(compile(json_object_gbnf()));
  EXPECT_TRUE(matches(m, R"({"a": [1, {"b": null}, "c", true, -2.5e-3]})"));
  EXPECT_TRUE(matches(m, "{}"));
  EXPECT_FALSE(matches(m, "[1]"));
  EXPECT_FALSE(matches(m, R"({"a": tru})"));
}

std::string schema_error(const std::string& schema) {
  try {
    json_schema_gbnf(json::parse(schema));
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Every integer near the bounds (and far beyond them) is taken exactly when it is in range.
TEST(JsonSchema, IntegerRangesTakeExactlyTheirIntegers) {
  struct Range {
    std::string keywords;
    int64_t lo, hi;  // what the keywords mean; INT64_MIN / INT64_MAX: open
  };
  constexpr int64_t kOpen = INT64_MAX, kOpenBelow = INT64_MIN;
  for (const Range& r : std::vector<Range>{
           {R"("minimum": 7, "maximum": 1234)", 7, 1234},
           {R"("minimum": -105, "maximum": -3)", -105, -3},
           {R"("minimum": -5, "maximum": 10)", -5, 10},
           {R"("minimum": 0, "maximum": 0)", 0, 0},
           {R"("minimum": 95, "maximum": 120)", 95, 120},
           {R"("minimum": -5)", -5, kOpen},
           {R"("minimum": 1)", 1, kOpen},
           {R"("maximum": 42)", kOpenBelow, 42},
           {R"("maximum": -42)", kOpenBelow, -42},
           {R"("exclusiveMinimum": 0, "exclusiveMaximum": 100)", 1, 99},
           {R"("minimum": 0.5, "maximum": 9.5)", 1, 9},
           {R"("minimum": 3, "exclusiveMinimum": true, "maximum": 8)", 4, 8},
       }) {
    SCOPED_TRACE(r.keywords);
    Matcher m(
        compile(json_schema_gbnf(json::parse("{\"type\": \"integer\", " + r.keywords + "}"))));
    std::vector<int64_t> probes = {0,
                                   1,
                                   -1,
                                   9,
                                   10,
                                   99,
                                   100,
                                   999,
                                   1000,
                                   123456789,
                                   -123456789,
                                   999999999999999,
                                   -999999999999999};
    for (int64_t b : {r.lo, r.hi})
      if (b != kOpen && b != kOpenBelow)
        for (int64_t d = -130; d <= 130; ++d) probes.push_back(b + d);
    for (int64_t x : probes) {
      const bool in = x >= r.lo && x <= r.hi;
      EXPECT_EQ(matches(m, std::to_string(x)), in) << x;
    }
    EXPECT_FALSE(matches(m, "007"));
    EXPECT_FALSE(matches(m, "-0"));
  }
}

TEST(JsonSchema, UnsupportedKeywordsAreRefusedByName) {
  EXPECT_EQ(schema_error(R"({"type": "object", "properties": {"age": {"type": "number",
      "minimum": 0}}})"),
            "schema /properties/age: 'minimum' / 'maximum' are supported on integers only");
  EXPECT_EQ(schema_error(R"({"type": "integer", "minimum": 5, "exclusiveMaximum": 5})"),
            "schema (root): the range holds no integer");
  EXPECT_EQ(schema_error(R"({"type": "integer", "maximum": "9"})"),
            "schema /maximum: must be a number");
  EXPECT_EQ(schema_error(R"({"type": "string", "multipleOf": 2})"),
            "schema (root): 'multipleOf' is not supported");
  EXPECT_EQ(schema_error(R"({"type": "string", "pattern": "^a+$"})"),
            "schema (root): 'pattern' is not supported");
  EXPECT_EQ(schema_error(R"({"type": "strin"})"), "schema /type: unknown type 'strin'");
  EXPECT_EQ(schema_error(R"({"$ref": "#/$defs/missing"})"),
            "schema /$ref: '#/$defs/missing' does not name a definition in this schema");
  EXPECT_EQ(schema_error(R"({"type": "object", "properties": {}, "required": ["x"]})"),
            "schema /required: 'x' is not among the properties");
  EXPECT_EQ(schema_error("false"), "schema (root): the schema false allows nothing");
  EXPECT_EQ(schema_error("3"), "schema (root): a schema must be an object or a boolean");
  EXPECT_EQ(schema_error(R"({"type": "array", "minItems": 3, "maxItems": 2})"),
            "schema (root): maxItems is below minItems");
}

// The trie's mask against each token fed on its own, over random vocabularies and states.
TEST(TokenTrie, MaskEqualsCheckingEveryToken) {
  const std::string gbnf = json_schema_gbnf(json::parse(
      R"({"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "number"},
          "tags": {"type": "array", "items": {"type": "string", "format": "date"}}},
          "required": ["name"]})"));
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\":,. -0123456789eEnamesgtru\\é\xe2\x82\xac";
  std::vector<std::string> vocab(3000);
  for (size_t i = 1; i < vocab.size(); ++i) {  // id 0 stays empty: never allowed
    const size_t len = 1 + rng() % 5;
    for (size_t k = 0; k < len; ++k) vocab[i] += alphabet[rng() % alphabet.size()];
  }
  const TokenTrie trie(vocab);
  Matcher m(compile(gbnf));
  const std::string doc = R"({"name": "Zoë", "n": -1.5e2, "tags": ["2026-12-07", "2025-01-31"]})";
  std::vector<uint8_t> mask;
  size_t allowed_total = 0;
  for (size_t cut = 0; cut <= doc.size(); ++cut) {
    const ByteState s = TokenTrie::feed(m, {m.start(), 0, 0}, doc.substr(0, cut));
    ASSERT_NE(s.set, Matcher::kDead) << cut;
    trie.allowed(m, s, mask);
    for (int32_t id = 0; id < trie.size(); ++id) {
      const std::string& t = vocab[size_t(id)];
      bool ok = false;
      if (!t.empty()) {
        const ByteState e = TokenTrie::feed(m, s, t);
        ok = e.set != Matcher::kDead && m.can_complete(e);
      }
      ASSERT_EQ(mask[size_t(id)] != 0, ok) << "prefix " << doc.substr(0, cut) << " token " << t;
      allowed_total += ok;
    }
  }
  EXPECT_GT(allowed_total, 1000u);  // the comparison saw real choices, not only refusals
}

TEST(Matcher, DropKeepsTheCurrentState) {
  Matcher m(compile(json_object_gbnf()));
  ByteState s = TokenTrie::feed(m, {m.start(), 0, 0}, R"({"a": [1, {"b": )");
  const size_t before = m.size();
  s.set = m.drop(s.set);
  EXPECT_LT(m.size(), before);
  s = TokenTrie::feed(m, s, "null}]}");
  EXPECT_TRUE(s.set != Matcher::kDead && m.accepting(s.set));
  EXPECT_TRUE(matches(m, "{}"));  // start() survives the drop
}

}  // namespace
}  // namespace sy::grammar
