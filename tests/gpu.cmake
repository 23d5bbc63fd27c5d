# GPU backends: op tests against cpu_ref and whole-model logits (on the CPU emulator, warp 32
# and 64, everywhere; on cuda and hip where a device exists), the no-device behaviour and the host's fallback (with any GPU
# hidden), the CLI falling back, and the cuda plugin's load-time dependencies.
set(gpu_plugins)
set(gpu_targets)
foreach(name cuda hip gpu_emu gpu_emu64)
  if(TARGET switchyard_backend_${name})
    list(APPEND gpu_plugins ${name})
    list(APPEND gpu_targets switchyard_backend_${name})
  endif()
endforeach()
string(REPLACE ";" "," gpu_plugin_list "${gpu_plugins}")

foreach(t gpu_ops gpu_model gpu_nodevice)
  if(t STREQUAL "gpu_ops")
    set(libs switchyard_abi switchyard_common ${CMAKE_DL_LIBS})
  else()
    set(libs switchyard_engine switchyard_modelgen)
  endif()
  switchyard_add_test(test_${t} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_${t}.cpp LIBS ${libs})
  target_compile_definitions(test_${t} PRIVATE SWITCHYARD_GPU_PLUGINS="${gpu_plugin_list}")
  add_dependencies(test_${t} switchyard_backend_cpu_ref switchyard_backend_cpu_onednn
    switchyard_scheduler_fixed_window ${gpu_targets})
endforeach()

set(no_gpu "CUDA_VISIBLE_DEVICES=-1;HIP_VISIBLE_DEVICES=-1;ROCR_VISIBLE_DEVICES=-1")
foreach(name cuda hip)
  if(NOT TARGET switchyard_backend_${name})
    continue()
  endif()
  string(TOUPPER ${name} runtime)
  add_test(NAME cli_run_${name}_falls_back COMMAND $<TARGET_FILE:switchyard> run
    --config ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/gpu_fallback_${name}.toml --prompt "hello"
    WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  set_tests_properties(cli_run_${name}_falls_back PROPERTIES ENVIRONMENT "${no_gpu}"
    PASS_REGULAR_EXPRESSION "backend ${name} reports no usable device \\(no ${runtime} device\\)[;] falling back to backend cpu_onednn.*backend cpu_onednn, scheduler fixed_window: 1 requests, 8 tokens")
endforeach()

# The runtime is static and cuBLAS is dlopen'd: loading the plugin needs no CUDA library.
if(TARGET switchyard_backend_cuda)
  add_test(NAME gpu_cuda_plugin_needs_no_cuda_library COMMAND ldd $<TARGET_FILE:switchyard_backend_cuda>)
  set_tests_properties(gpu_cuda_plugin_needs_no_cuda_library PROPERTIES
    PASS_REGULAR_EXPRESSION "libc\\.so" FAIL_REGULAR_EXPRESSION "libcuda|libcudart|libcublas|not found")
endif()
