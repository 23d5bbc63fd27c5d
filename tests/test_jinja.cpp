// The Jinja engine renders what Jinja2 renders, configured as transformers' apply_chat_template
// configures it: 260 one-feature templates and 55 real chat templates on 7 conversations, with
// the expected bytes written by Jinja2 itself (scripts/gen-jinja-cases.py). Where Jinja2 fails,
// the engine must fail too, with an Error naming a line.
#include <gtest/gtest.h>

#include <fstream>

#include "jinja/template.h"

namespace sy::jinja {
namespace {

using Json = nlohmann::ordered_json;

Json load(const std::string& name) {
  std::ifstream f(std::string(SWITCHYARD_SOURCE_DIR) + "/tests/fixtures/jinja/" + name);
  EXPECT_TRUE(f.good()) << name;
  return Json::parse(f);
}

std::tm pinned_date() {  // the generator pins strftime_now to 2025-06-15 00:00:00
  std::tm t{};
  t.tm_year = 125;
  t.tm_mon = 5;
  t.tm_mday = 15;
  t.tm_wday = 0;
  t.tm_yday = 165;
  return t;
}

// The render, or "error: <message>" when the engine refused.
std::string render(const std::string& source, const Object& vars) {
  try {
    return Template(source).render(vars).bytes;
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

TEST(Jinja, EveryFeatureCaseRendersAsJinja2) {
  const Json cases = load("cases.json")["cases"];
  ASSERT_GT(cases.size(), 200u);
  size_t failed = 0;
  for (const Json& c : cases) {
    Object vars;
    for (const auto& [k, v] : c["context"].items()) vars.set(k, from_json(v, true));
    vars.set("strftime_now", strftime_now(pinned_date()));
    const std::string got = render(c["template"].get<std::string>(), vars);
    if (c.contains("error")) {
      if (got.rfind("error: ", 0) != 0) {
        ++failed;
        ADD_FAILURE() << c["name"] << ": Jinja2 fails, the engine rendered\n" << got;
      }
    } else if (got != c["expected"].get<std::string>()) {
      ++failed;
      ADD_FAILURE() << c["name"] << ": template\n"
                    << c["template"].get<std::string>() << "\nexpected\n"
                    << c["expected"].get<std::string>() << "\ngot\n"
                    << got;
    }
  }
  EXPECT_EQ(failed, 0u) << "of " << cases.size();
}

// llama.cpp's from_json filter (not Jinja2's; DeepSeek V3.2's template reads a call's string
// arguments with it): the value the string encodes, keys in order; not JSON is an error naming
// the line.
TEST(Jinja, FromJsonIsLlamaCppsExtension) {
  Object vars;
  vars.set("args", Value(std::string(R"({"b": [1, "y"], "a": null})"), true));
  EXPECT_EQ(render("{% set a = args | from_json %}{{ a.b[1] }} {{ a | tojson }}", vars),
            R"(y {"b": [1, "y"], "a": null})");
  EXPECT_EQ(render("\n{{ 'nope' | from_json }}", vars),
            "error: template line 2: from_json: the string is not JSON");
  EXPECT_EQ(render("{{ 3 | from_json }}", vars),
            "error: template line 1: from_json: 'int' object is not a string");
}

TEST(Jinja, RealChatTemplatesRenderAsTransformers) {
  const Json ref = load("real_templates.json");
  std::map<std::string, Json> conversations;
  for (const Json& c : ref["conversations"]) conversations[c["id"].get<std::string>()] = c;
  size_t renders = 0, failed = 0;
  for (const Json& t : ref["templates"]) {
    const std::string source = t["source"].get<std::string>();
    for (const auto& [id, want] : t["renders"].items()) {
      const Json& conv = conversations.at(id);
      Object vars;
      vars.set("messages", from_json(conv["messages"], true));
      vars.set("tools", from_json(conv["tools"], true));
      vars.set("documents", Value::none());
      vars.set("add_generation_prompt", Value(conv["add_generation_prompt"].get<bool>()));
      for (const auto& [k, v] : conv["special_tokens"].items()) vars.set(k, from_json(v, false));
      for (const auto& [k, v] : conv["kwargs"].items()) vars.set(k, from_json(v, true));
      vars.set("strftime_now", strftime_now(pinned_date()));
      const std::string got = render(t["template"].get<std::string>(), vars);
      ++renders;
      if (want.contains("error")) {
        if (got.rfind("error: ", 0) != 0) {
          ++failed;
          ADD_FAILURE() << source << " / " << id << ": Jinja2 fails (" << want["error"]
                        << "), the engine rendered\n"
                        << got;
        }
      } else if (got != want["expected"].get<std::string>()) {
        ++failed;
        ADD_FAILURE() << source << " / " << id << ": expected\n"
                      << want["expected"].get<std::string>() << "\ngot\n"
                      << got;
      }
    }
  }
  EXPECT_EQ(failed, 0u) << "of " << renders;
}

}  // namespace
}  // namespace sy::jinja
