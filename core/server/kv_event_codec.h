// vLLM's KV cache events (vllm/distributed/kv_events.py) as msgpack, the wire format llm-d's
// precise prefix-cache scorer, NVIDIA Dynamo's KV router and the SGLang router decode.
//
// An EventBatch is a msgspec struct encoded as an array: [ts, [event, ...], data_parallel_rank].
// Each event is a tagged msgspec struct, in one of two encodings:
//   array (vLLM up to 0.23, and what every consumer decodes):
//     ["BlockStored", [hash, ...], parent_hash | nil, [token, ...], block_size, lora_id | nil,
//      medium | nil, lora_name | nil]
//     ["BlockRemoved", [hash, ...], medium | nil]
//     ["AllBlocksCleared"]
//   map (vLLM after it dropped array_like, #42892): the same fields by name, tag under "type".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sy::server {

struct KvEvent {
  enum class Kind { stored, removed, cleared };
  Kind kind = Kind::stored;
  std::vector<uint64_t> hashes;    // stored, removed: the chain, in order
  std::optional<uint64_t> parent;  // stored: the block before hashes[0] (none: a first block)
  std::vector<int32_t> tokens;     // stored: hashes.size() * block_size token ids
  uint32_t block_size = 0;         // stored
  std::optional<std::string> medium;
};

struct KvEventBatch {
  double ts = 0;  // seconds since the epoch
  std::vector<KvEvent> events;
  std::optional<int64_t> data_parallel_rank;
};

enum class KvEventEncoding { array, map };

std::string encode_kv_events(const KvEventBatch& b, KvEventEncoding enc = KvEventEncoding::array);
// Accepts either encoding (and a batch without data_parallel_rank). Throws std::runtime_error
// naming what is malformed.
KvEventBatch decode_kv_events(std::string_view payload);

}  // namespace sy::server
