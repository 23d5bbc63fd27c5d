// Internals shared by the random-model writer's files (generator.cpp, presets.cpp, describe.cpp,
// tables.cpp). Not for other users.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/model_desc.h"
#include "modelgen/generator.h"
#include "switchyard/common/file_type.h"

namespace sy::gguf {
class Writer;
}

namespace sy::model::detail {

// splitmix64: tiny, portable, and the same stream on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform() { return (next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  float normal() {                                                   // Box-Muller
    const float u1 = std::max(uniform(), 1e-7f), u2 = uniform();
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853f * u2);
  }
};

// The llama.cpp file type named d ("q4_k_m"); std::invalid_argument listing them if unknown.
const dtype::FileType& file_type(const std::string& d);
// Refuses dims that are not whole blocks for a file type of 32-value blocks (naming the dim).
void check_whole_blocks(const dtype::FileType& ft, const std::string& dtype_name,
                        const std::pair<const char*, uint32_t>* dims, size_t n_dims);
// F32: the type a converter writes, which llama-quantize reads.
bool is_source_type(const dtype::FileType& ft);
// general.file_type (and, past F32, general.quantization_version) as llama-quantize sets them.
void set_file_type(gguf::Writer& w, const dtype::FileType& ft);
void write_vocab(gguf::Writer& w, const ModelShape& s);

// The description a shape stands for (the keys the writer writes, read back by the loader, give
// the same one); throws std::invalid_argument naming what is wrong with the shape.
ModelDesc describe(const ModelShape& s);
// Throws std::invalid_argument naming a dimension whose rows are not whole blocks of the file
// type (for file types without a fallback type).
void check_blocks(const ModelShape& s, const dtype::FileType& ft, const std::string& dtype);
bool hybrid_preset(const std::string& name, ModelShape& out);
std::vector<std::string> hybrid_preset_names();
bool family_preset(const std::string& name, ModelShape& out);  // the 2026 families
std::vector<std::string> family_preset_names();

}  // namespace sy::model::detail
