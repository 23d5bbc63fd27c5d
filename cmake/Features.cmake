# Optional features. Each is a cache entry SWITCHYARD_<NAME> set to AUTO (the default), ON or OFF:
#   AUTO builds the feature where what it needs is installed and skips it, with a message, where
#        not (and looks again on every configure, so installing a package later turns it on);
#   ON   requires it: configuring fails and names what is missing;
#   OFF  leaves it out.
# Below this file SWITCHYARD_<NAME> is a plain ON/OFF variable. The core, the CPU backends, the
# schedulers, the bench and the CLI are not optional: `scripts/install-deps.sh --minimal` installs
# what they need.

set(SWITCHYARD_FEATURES_BUILT)
set(SWITCHYARD_FEATURES_SKIPPED)

# switchyard_feature(NAME DOC MISSING [REQUIRES feature...]): resolves SWITCHYARD_<NAME>.
# MISSING is empty when what it needs is here, else says what is not (and which package has it).
# A feature that REQUIRES another is off when that one is.
function(switchyard_feature name doc missing)
  cmake_parse_arguments(F "" "" "REQUIRES" ${ARGN})
  set(var SWITCHYARD_${name})
  set(${var} AUTO CACHE STRING "${doc}: AUTO (where its packages are installed), ON or OFF")
  set_property(CACHE ${var} PROPERTY STRINGS AUTO ON OFF)
  set(want ${${var}})
  foreach(other ${F_REQUIRES})
    if(NOT SWITCHYARD_${other} AND NOT missing)
      set(missing "SWITCHYARD_${other} is off")
    endif()
  endforeach()
  if(want STREQUAL "OFF" OR NOT want)
    set(enabled OFF)
    set(why "off")
  elseif(missing)
    if(want STREQUAL "AUTO")
      set(enabled OFF)
      set(why "${missing}")
    else()
      message(FATAL_ERROR "${var}=${want}, but ${missing}")
    endif()
  else()
    set(enabled ON)
  endif()
  string(TOLOWER ${name} label)
  if(enabled)
    set(SWITCHYARD_FEATURES_BUILT ${SWITCHYARD_FEATURES_BUILT} ${label} PARENT_SCOPE)
  else()
    set(SWITCHYARD_FEATURES_SKIPPED ${SWITCHYARD_FEATURES_SKIPPED} "${label} (${why})" PARENT_SCOPE)
  endif()
  set(${var} ${enabled} PARENT_SCOPE)
endfunction()

# Builds the missing-list of a feature ("not found: a (package), b (package)"): appends WHAT to
# VAR when the variable FOUND is false.
macro(switchyard_need var found what)
  if(NOT ${found})
    if(${var})
      string(APPEND ${var} ", ")
    else()
      set(${var} "not found: ")
    endif()
    string(APPEND ${var} "${what}")
  endif()
endmacro()

# The OpenAI-compatible HTTP server (`serve`, `bench-serve`, `bench-hardening`): nothing beyond the
# core's packages, so it is off only when asked.
switchyard_feature(SERVER "The HTTP server and its commands" "")

# KV cache events over ZeroMQ in vLLM's msgpack wire format (`[serve.kv_events]`).
find_path(ZMQ_INCLUDE_DIR zmq.h)
find_library(ZMQ_LIBRARY zmq)
find_path(CPPZMQ_INCLUDE_DIR zmq.hpp)
find_package(msgpack CONFIG QUIET)  # Debian 12: msgpackc-cxx/msgpack-config.cmake
set(kv_missing "")
switchyard_need(kv_missing ZMQ_INCLUDE_DIR "zmq.h (libzmq3-dev)")
switchyard_need(kv_missing ZMQ_LIBRARY "libzmq (libzmq3-dev)")
switchyard_need(kv_missing CPPZMQ_INCLUDE_DIR "zmq.hpp (cppzmq-dev)")
switchyard_need(kv_missing msgpack_FOUND "msgpack-cxx (libmsgpack-cxx-dev)")
switchyard_feature(KV_EVENTS "KV cache events over ZeroMQ" "${kv_missing}" REQUIRES SERVER)

# The GPU backend plugins. Neither needs a GPU to build.
find_program(SWITCHYARD_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_PATH PATH_SUFFIXES bin)
set(cuda_missing "")
switchyard_need(cuda_missing SWITCHYARD_NVCC "nvcc (the CUDA Toolkit, in /usr/local/cuda)")
switchyard_feature(CUDA "The CUDA backend plugin" "${cuda_missing}")
find_program(SWITCHYARD_HIPCC hipcc)
find_library(SWITCHYARD_AMDHIP64 amdhip64)
set(hip_missing "")
switchyard_need(hip_missing SWITCHYARD_HIPCC "hipcc (hipcc)")
switchyard_need(hip_missing SWITCHYARD_AMDHIP64 "libamdhip64 (libamdhip64-dev)")
switchyard_feature(HIP "The ROCm HIP backend plugin" "${hip_missing}")

# Tests that need programs outside the build: a real two-replica cluster behind HAProxy with
# Prometheus (scripts/cluster.sh), and the official OpenAI Node SDK as a client.
find_program(SWITCHYARD_HAPROXY haproxy PATHS /usr/sbin)
find_program(SWITCHYARD_PROMETHEUS prometheus)
find_program(SWITCHYARD_PROMTOOL promtool)
find_program(SWITCHYARD_CURL curl)
set(cluster_missing "")
switchyard_need(cluster_missing SWITCHYARD_HAPROXY "haproxy (haproxy)")
switchyard_need(cluster_missing SWITCHYARD_PROMETHEUS "prometheus (prometheus)")
switchyard_need(cluster_missing SWITCHYARD_PROMTOOL "promtool (prometheus)")
switchyard_need(cluster_missing SWITCHYARD_CURL "curl (curl)")
switchyard_feature(CLUSTER_TESTS "The HAProxy + Prometheus cluster test" "${cluster_missing}"
  REQUIRES SERVER)
find_program(SWITCHYARD_NODE node)
find_program(SWITCHYARD_NPM npm)
set(node_missing "")
switchyard_need(node_missing SWITCHYARD_NODE "node (nodejs)")
switchyard_need(node_missing SWITCHYARD_NPM "npm (npm)")
switchyard_feature(NODE_TESTS "The OpenAI Node SDK conformance test" "${node_missing}"
  REQUIRES SERVER)

# Developer checks: the C ABI against its committed baseline (abigail-tools), and the libFuzzer
# targets (clang 15; without it their past findings are still replayed).
find_program(SWITCHYARD_ABIDW abidw)
find_program(SWITCHYARD_ABIDIFF abidiff)
set(abi_missing "")
switchyard_need(abi_missing SWITCHYARD_ABIDW "abidw (abigail-tools)")
switchyard_need(abi_missing SWITCHYARD_ABIDIFF "abidiff (abigail-tools)")
switchyard_feature(ABI_CHECK_TESTS "The ABI baseline check (scripts/abi-check.sh)" "${abi_missing}")
find_program(SWITCHYARD_CLANGXX15 clang++-15)
set(fuzz_missing "")
switchyard_need(fuzz_missing SWITCHYARD_CLANGXX15 "clang++-15 (clang-15, libclang-common-15-dev)")
switchyard_feature(FUZZ_TESTS "The libFuzzer runs (scripts/fuzz.sh)" "${fuzz_missing}")

# One line on every configure (stderr: scripts/build.sh keeps CMake's own output quiet).
string(REPLACE ";" ", " built "${SWITCHYARD_FEATURES_BUILT}")
string(REPLACE ";" ", " skipped "${SWITCHYARD_FEATURES_SKIPPED}")
if(NOT built)
  set(built "none")
endif()
if(NOT skipped)
  set(skipped "none")
endif()
message(NOTICE "switchyard features: ${built}; skipped: ${skipped}")
