#include "model/load_table.h"

#include "gguf/gguf.h"
#include "switchyard/common/error.h"

namespace sy::model {

const sy_tensor* LoadTable::take(const TensorSpec& spec) {
  const auto kind = spec.matrix ? WeightMap::Kind::matrix : WeightMap::Kind::f32;
  const sy_tensor* t = w_.find(spec.name, spec.ne, kind);
  if (!t && spec.need == Need::required) throw Error(f_.origin() + ": missing tensor " + spec.name);
  return t;
}

float LoadTable::scale(const std::string& name, bool applied) {
  if (applied) return w_.scalar(name).value_or(1.0f);
  unapplied(name, {1});
  return 1.0f;
}

void LoadTable::unapplied(const std::string& name, std::initializer_list<int64_t> ne) {
  if (w_.accept(name, std::vector<int64_t>(ne))) unapplied_.push_back(name);
}

bool LoadTable::has(const std::string& name) const {
  return f_.find_tensor(name) != nullptr;
}

void LoadTable::refuse_unused(const std::string& arch) const {
  const std::vector<std::string> left = w_.unused();
  if (left.empty()) return;
  std::string msg = f_.origin() + ": tensor " + left[0] + " is not used by the " + arch +
                    " architecture (not in llama.cpp's tensor table for it either); refusing "
                    "the file rather than ignoring the tensor";
  if (left.size() > 1) {
    msg += " (" + std::to_string(left.size() - 1) + " more unused:";
    for (size_t i = 1; i < left.size() && i < 5; ++i) msg += " " + left[i];
    msg += left.size() > 5 ? " ...)" : ")";
  }
  throw Error(msg);
}

}  // namespace sy::model
