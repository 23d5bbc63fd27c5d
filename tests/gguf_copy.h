// Test helper: a GGUF file copied into a writer, to edit and write again.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace sy::test {

// A writer holding f's keys and its tensors (those `keep` accepts, all by default): a copy of the
// file to edit and write again.
inline sy::gguf::Writer copy_gguf(const sy::gguf::File& f,
                                  const std::function<bool(const std::string&)>& keep = {}) {
  sy::gguf::Writer w;
  for (const auto& [k, v] : f.metadata()) w.set(k, v);
  for (const auto& t : f.tensors())
    if (!keep || keep(t.name))
      w.add_tensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + t.n_dims), t.data, t.nbytes);
  return w;
}

}  // namespace sy::test
