/* The reference library scripts/abi-check.sh builds (with -g) from the ABI headers and dumps
 * with abidw. libabigail sees only types reachable from exported functions, so there is one
 * function per struct and enum of the ABI; a new struct or enum gets a new function here.
 * Macros are invisible to abidw, so the values that must never change are mirrored as
 * enumerators of sy_abi_frozen: changing one is an enumerator change, which fails the check.
 * (SY_ABI_VERSION_MINOR is left out on purpose: bumping it is the compatible change.) */
#include "switchyard/abi/plugin.h"

#define REF(name, type)                      \
  SY_EXPORT void sy_abi_ref_##name(type v) { \
    (void)v;                                 \
  }

enum sy_abi_frozen {
  SY_FROZEN_ABI_MAJOR = SY_ABI_VERSION_MAJOR,
  SY_FROZEN_CAP_ZERO_COPY_HOST = (int)SY_CAP_ZERO_COPY_HOST,
  SY_FROZEN_CAP_ASYNC = (int)SY_CAP_ASYNC,
  SY_FROZEN_CAP_CHUNKED_PREFILL = (int)SY_CAP_CHUNKED_PREFILL,
  SY_FROZEN_CAP_PREEMPTION = (int)SY_CAP_PREEMPTION,
  SY_FROZEN_BACKEND_IFACE_SIZE_1_0 = (int)SY_BACKEND_IFACE_SIZE_1_0,
  SY_FROZEN_SCHED_VIEW_SIZE_1_0 = (int)SY_SCHED_VIEW_SIZE_1_0,
  SY_FROZEN_NOTE_PLUGIN = (int)SY_NOTE_PLUGIN, /* since 1.3 */
  SY_FROZEN_NOTE_FORMAT = (int)SY_NOTE_FORMAT
};

/* types.h */
REF(status, sy_status)
REF(dtype, sy_dtype)
REF(param, const sy_param*)
REF(log_level, sy_log_level)
/* host.h */
REF(host_api, const sy_host_api*)
/* backend.h */
REF(device_kind, sy_device_kind)
REF(device_info, const sy_device_info*)
REF(tensor, const sy_tensor*)
REF(kv_store_args, const sy_kv_store_args*)
REF(attention_args, const sy_attention_args*)
REF(step_shape, const sy_step_shape*)
REF(rope_mode, sy_rope_mode)
REF(rope_ext_args, const sy_rope_ext_args*)
REF(bias_scale_order, sy_bias_scale_order)
REF(bias_scale_args, const sy_bias_scale_args*)
REF(backend_iface, const sy_backend_iface*)
REF(moe_gating, sy_moe_gating)                            /* since 1.5: SIGMOID */
REF(ssm_scan2_args, const sy_ssm_scan2_args*)             /* since 1.5 */
REF(gdn_head_map, sy_gdn_head_map)                        /* since 1.5 */
REF(gated_delta_net_args, const sy_gated_delta_net_args*) /* since 1.5 */
REF(norm_kind, sy_norm_kind)                              /* since 1.5 */
REF(norm_args, const sy_norm_args*)                       /* since 1.5 */
REF(unary_kind, sy_unary_kind)                            /* since 1.5 */
REF(unary_args, const sy_unary_args*)                     /* since 1.5 */
REF(swiglu_oai_args, const sy_swiglu_oai_args*)           /* since 1.6 */
/* scheduler.h */
REF(request_state, sy_request_state)
REF(sched_request, const sy_sched_request*)
REF(sched_view, const sy_sched_view*)
REF(sched_entry, const sy_sched_entry*)
REF(sched_plan, const sy_sched_plan*)
REF(scheduler_iface, const sy_scheduler_iface*)
/* router.h (since 1.2) */
REF(route_path, sy_route_path)
REF(route_request, const sy_route_request*)
REF(route_decision, const sy_route_decision*)
REF(router_iface, const sy_router_iface*)
/* plugin.h */
REF(plugin_kind, sy_plugin_kind)
REF(plugin_info, const sy_plugin_info*)
REF(plugin_entry_fn, sy_plugin_entry_fn)
REF(plugin_note, const sy_plugin_note*) /* since 1.3 */
REF(frozen, enum sy_abi_frozen)
