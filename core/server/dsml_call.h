// DeepSeek V3.2's tool calls (DSML), as its template writes them:
//   <｜DSML｜function_calls>
//   <｜DSML｜invoke name="NAME">
//   <｜DSML｜parameter name="KEY" string="true">text as is</｜DSML｜parameter>
//   <｜DSML｜parameter name="KEY" string="false">JSON</｜DSML｜parameter>
//   </｜DSML｜invoke>
//   </｜DSML｜function_calls>
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sy::server::dsml {

// ｜DSML｜: U+FF5C, "DSML", U+FF5C (a universal character name takes exactly four hex digits).
inline constexpr std::string_view kMarker = "\uFF5CDSML\uFF5C";
inline constexpr std::string_view kCallsOpen = "<\uFF5CDSML\uFF5Cfunction_calls>";
inline constexpr std::string_view kCallsClose = "</\uFF5CDSML\uFF5Cfunction_calls>";

struct Call {
  std::string name;
  std::string arguments;  // a compact JSON object, the parameters in the model's order
};

// What the text from `at` holds: a whole invoke (read into `call`, `at` moved past it), the
// start of one still arriving (or nothing yet), a closing tag (the block's end), or text that is
// no invoke.
enum class Next { call, more, close, other };
Next next_invoke(std::string_view text, size_t& at, Call& call);

}  // namespace sy::server::dsml
