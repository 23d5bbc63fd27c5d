#include "server/kv_event_codec.h"

#include <msgpack.hpp>
#include <stdexcept>

#include "switchyard/common/error.h"

namespace sy::server {
namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

const char* tag_of(KvEvent::Kind k) {
  return k == KvEvent::Kind::stored    ? "BlockStored"
         : k == KvEvent::Kind::removed ? "BlockRemoved"
                                       : "AllBlocksCleared";
}

void pack_str(Packer& p, std::string_view s) {
  p.pack_str(static_cast<uint32_t>(s.size()));
  p.pack_str_body(s.data(), static_cast<uint32_t>(s.size()));
}

void pack_hashes(Packer& p, const std::vector<uint64_t>& h) {
  p.pack_array(static_cast<uint32_t>(h.size()));
  for (uint64_t x : h) p.pack_uint64(x);  // msgpack's smallest form, as msgspec writes ints
}

void pack_opt_str(Packer& p, const std::optional<std::string>& s) {
  if (s)
    pack_str(p, *s);
  else
    p.pack_nil();
}

// The fields of one event after its tag, in declaration order; `key` names each for the map form.
template <class Key>
void pack_fields(Packer& p, const KvEvent& e, Key key) {
  if (e.kind == KvEvent::Kind::stored) {
    key("block_hashes");
    pack_hashes(p, e.hashes);
    key("parent_block_hash");
    if (e.parent)
      p.pack_uint64(*e.parent);
    else
      p.pack_nil();
    key("token_ids");
    p.pack_array(static_cast<uint32_t>(e.tokens.size()));
    for (int32_t t : e.tokens) p.pack_int32(t);
    key("block_size");
    p.pack_uint32(e.block_size);
    key("lora_id");
    p.pack_nil();
    key("medium");
    pack_opt_str(p, e.medium);
    key("lora_name");
    p.pack_nil();
  } else if (e.kind == KvEvent::Kind::removed) {
    key("block_hashes");
    pack_hashes(p, e.hashes);
    key("medium");
    pack_opt_str(p, e.medium);
  }
}

uint32_t n_fields(KvEvent::Kind k) {
  return k == KvEvent::Kind::stored ? 7 : k == KvEvent::Kind::removed ? 2 : 0;
}

void pack_event(Packer& p, const KvEvent& e, KvEventEncoding enc) {
  if (enc == KvEventEncoding::array) {
    p.pack_array(1 + n_fields(e.kind));
    pack_str(p, tag_of(e.kind));
    pack_fields(p, e, [](const char*) {});
  } else {
    p.pack_map(1 + n_fields(e.kind));
    pack_str(p, "type");
    pack_str(p, tag_of(e.kind));
    pack_fields(p, e, [&p](const char* k) { pack_str(p, k); });
  }
}

[[noreturn]] void bad(const std::string& what) {
  throw sy::Error("malformed KV event batch: " + what);
}

uint64_t as_hash(const msgpack::object& o, const char* what) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) return o.via.u64;
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return static_cast<uint64_t>(o.via.i64);
  if (o.type == msgpack::type::BIN) {  // newer vLLM: bytes; the last 8, big-endian
    uint64_t v = 0;
    const uint32_t n = o.via.bin.size, from = n > 8 ? n - 8 : 0;
    for (uint32_t i = from; i < n; ++i) v = v << 8 | static_cast<uint8_t>(o.via.bin.ptr[i]);
    return v;
  }
  bad(std::string(what) + " is not an integer or bytes");
}

std::string as_str(const msgpack::object& o, const char* what) {
  if (o.type != msgpack::type::STR) bad(std::string(what) + " is not a string");
  return std::string(o.via.str.ptr, o.via.str.size);
}

const msgpack::object_array& as_array(const msgpack::object& o, const char* what) {
  if (o.type != msgpack::type::ARRAY) bad(std::string(what) + " is not an array");
  return o.via.array;
}

// Field i of a positional event (after the tag), nil when the array is shorter (omitted
// trailing defaults).
struct Fields {
  const msgpack::object* arr = nullptr;  // array form: elements after the tag
  uint32_t n = 0;
  const msgpack::object_map* map = nullptr;
  const msgpack::object* get(uint32_t i, std::string_view name) const {
    if (arr) return i < n ? &arr[i] : nullptr;
    for (uint32_t k = 0; k < map->size; ++k) {
      const auto& kv = map->ptr[k];
      if (kv.key.type == msgpack::type::STR &&
          std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) == name)
        return &kv.val;
    }
    return nullptr;
  }
};

bool is_nil(const msgpack::object* o) {
  return !o || o->type == msgpack::type::NIL;
}

KvEvent decode_event(const msgpack::object& o) {
  Fields f;
  std::string tag;
  if (o.type == msgpack::type::ARRAY) {
    if (o.via.array.size == 0) bad("an event has no tag");
    tag = as_str(o.via.array.ptr[0], "an event's tag");
    f.arr = o.via.array.ptr + 1;
    f.n = o.via.array.size - 1;
  } else if (o.type == msgpack::type::MAP) {
    f.map = &o.via.map;
    const msgpack::object* t = f.get(0, "type");
    if (!t) bad("a map event has no \"type\"");
    tag = as_str(*t, "an event's type");
  } else {
    bad("an event is neither an array nor a map");
  }
  KvEvent e;
  auto hashes = [&](uint32_t i) {
    const msgpack::object* h = f.get(i, "block_hashes");
    if (!h) bad(tag + " has no block_hashes");
    const auto& a = as_array(*h, "block_hashes");
    for (uint32_t k = 0; k < a.size; ++k) e.hashes.push_back(as_hash(a.ptr[k], "a block hash"));
  };
  auto medium = [&](uint32_t i) {
    const msgpack::object* m = f.get(i, "medium");
    if (!is_nil(m)) e.medium = as_str(*m, "medium");
  };
  if (tag == "BlockStored") {
    e.kind = KvEvent::Kind::stored;
    hashes(0);
    if (const msgpack::object* p = f.get(1, "parent_block_hash"); !is_nil(p))
      e.parent = as_hash(*p, "parent_block_hash");
    const msgpack::object* t = f.get(2, "token_ids");
    if (!t) bad("BlockStored has no token_ids");
    const auto& ta = as_array(*t, "token_ids");
    for (uint32_t i = 0; i < ta.size; ++i) {
      if (ta.ptr[i].type != msgpack::type::POSITIVE_INTEGER) bad("a token id is not an integer");
      e.tokens.push_back(static_cast<int32_t>(ta.ptr[i].via.u64));
    }
    const msgpack::object* bs = f.get(3, "block_size");
    if (!bs || bs->type != msgpack::type::POSITIVE_INTEGER) bad("BlockStored has no block_size");
    e.block_size = static_cast<uint32_t>(bs->via.u64);
    medium(5);
  } else if (tag == "BlockRemoved") {
    e.kind = KvEvent::Kind::removed;
    hashes(0);
    medium(1);
  } else if (tag == "AllBlocksCleared") {
    e.kind = KvEvent::Kind::cleared;
  } else {
    bad("unknown event tag '" + tag + "'");
  }
  return e;
}

}  // namespace

std::string encode_kv_events(const KvEventBatch& b, KvEventEncoding enc) {
  msgpack::sbuffer buf;
  Packer p(buf);
  p.pack_array(b.data_parallel_rank ? 3 : 2);
  p.pack_double(b.ts);
  p.pack_array(static_cast<uint32_t>(b.events.size()));
  for (const auto& e : b.events) pack_event(p, e, enc);
  if (b.data_parallel_rank) p.pack_int64(*b.data_parallel_rank);
  return std::string(buf.data(), buf.size());
}

KvEventBatch decode_kv_events(std::string_view payload) {
  msgpack::object_handle h;
  try {
    h = msgpack::unpack(payload.data(), payload.size());
  } catch (const std::exception& e) {
    bad(std::string("not msgpack: ") + e.what());
  }
  const msgpack::object& o = h.get();
  const auto& top = as_array(o, "the batch");
  if (top.size < 2 || top.size > 3) bad("the batch has " + std::to_string(top.size) + " fields");
  KvEventBatch b;
  if (top.ptr[0].type == msgpack::type::FLOAT64 || top.ptr[0].type == msgpack::type::FLOAT32)
    b.ts = top.ptr[0].via.f64;
  else if (top.ptr[0].type == msgpack::type::POSITIVE_INTEGER)
    b.ts = static_cast<double>(top.ptr[0].via.u64);
  else
    bad("ts is not a number");
  const auto& ev = as_array(top.ptr[1], "events");
  for (uint32_t i = 0; i < ev.size; ++i) b.events.push_back(decode_event(ev.ptr[i]));
  if (top.size == 3 && top.ptr[2].type != msgpack::type::NIL) {
    if (top.ptr[2].type == msgpack::type::POSITIVE_INTEGER)
      b.data_parallel_rank = static_cast<int64_t>(top.ptr[2].via.u64);
    else if (top.ptr[2].type == msgpack::type::NEGATIVE_INTEGER)
      b.data_parallel_rank = top.ptr[2].via.i64;
    else
      bad("data_parallel_rank is not an integer");
  }
  return b;
}

}  // namespace sy::server
