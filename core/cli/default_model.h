// The model and backend of the embedded defaults (`run`, `bench-serve` without --config): the
// small generated dense model on oneDNN. Each command appends its own tables.
#pragma once

namespace sy::cli {

inline constexpr const char* kDefaultModelAndBackend = R"(
[model]
path = "models/dense-small.gguf"
generate = "dense-small"
seed = 7

[backend]
plugin = "cpu_onednn"
)";

}  // namespace sy::cli
