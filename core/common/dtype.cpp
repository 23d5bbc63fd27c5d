#include "switchyard/common/dtype.h"

namespace sy::dtype {

std::string type_names() {
  std::string out;
  for (const Traits& e : kTable) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

const char* ggml_only_name(uint32_t t) {
  // ggml's other type ids (ggml.h), so a refusal can say what a file holds.
  switch (t) {
    case 4:
      return "Q4_2 (removed from ggml)";
    case 5:
      return "Q4_3 (removed from ggml)";
    case 9:
      return "Q8_1";
    case 15:
      return "Q8_K";
    case 16:
      return "IQ2_XXS";
    case 17:
      return "IQ2_XS";
    case 18:
      return "IQ3_XXS";
    case 19:
      return "IQ1_S";
    case 21:
      return "IQ3_S";
    case 22:
      return "IQ2_S";
    case 24:
      return "I8";
    case 25:
      return "I16";
    case 27:
      return "I64";
    case 28:
      return "F64";
    case 29:
      return "IQ1_M";
    case 34:
      return "TQ1_0";
    case 35:
      return "TQ2_0";
    case 39:
      return "MXFP4";
    default:
      return "";
  }
}

}  // namespace sy::dtype
