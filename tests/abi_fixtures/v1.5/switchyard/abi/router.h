/* Switchyard router interface (since ABI 1.2): request triage, "the light path".
 *
 * Before a request queues, the host asks the router which path it takes: full (the complete
 * model) or light (a cheaper configuration of it, such as fewer MoE experts per token). The
 * router sees only cheap features of the request, never tensors, so a decision is a pure
 * function of the request and the router's parameters, testable without a model.
 *
 * Failure: a route call that fails (or returns a path the host does not know) sends the request
 * down the full path; the host logs the router's last_error and counts it (triage_errors).
 * Thread contract: calls on one sy_router_t are serialised by the host.
 * Ownership: the request and the prompt it points to are borrowed for the call; the decision
 * belongs to the host, which sets its struct_size and zeroes it before the call. */
#ifndef SWITCHYARD_ABI_ROUTER_H
#define SWITCHYARD_ABI_ROUTER_H

#include "switchyard/abi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_router_s* sy_router_t;

typedef enum sy_route_path {
  SY_PATH_FULL = 0,  /* the complete model */
  SY_PATH_LIGHT = 1, /* the cheaper configuration the host maps the light path to */
  SY_PATH_FORCE_32BIT = 0x7fffffff
} sy_route_path;

/* The features of one request the router may use. Filled by the host. */
typedef struct sy_route_request {
  uint32_t struct_size;
  uint32_t prompt_len; /* tokens in `prompt` */
  uint64_t id;         /* the engine's request id (unique per engine, increasing in submission
                        * order); the request has passed the engine's checks */
  uint32_t max_new_tokens;
  int32_t priority;     /* larger runs first */
  uint32_t simple_hint; /* 1: the client says the request is simple */
  uint32_t reserved0;
  const int32_t* prompt; /* the prompt's token ids, prompt_len of them; borrowed for the call */
} sy_route_request;

typedef struct sy_route_decision {
  uint32_t struct_size; /* set by the host */
  uint32_t path;        /* sy_route_path, set by the router (the host's default: full) */
  /* Optional, router-defined: why (0: not given). The host counts it per code
   * (triage_reason.<code>) so a rule's effect shows in the metrics. */
  uint32_t reason;
  uint32_t reserved0;
} sy_route_decision;

typedef struct sy_router_iface {
  uint32_t struct_size;
  uint32_t reserved0;
  /* ---- since 1.2 ---- */
  sy_status (*create)(const sy_param* params, size_t n_params, sy_router_t* out);
  void (*destroy)(sy_router_t router);
  /* Message of the last failed call on `router` (NULL: of the last failed create). */
  const char* (*last_error)(sy_router_t router);
  sy_status (*route)(sy_router_t router, const sy_route_request* request,
                     sy_route_decision* decision);
} sy_router_iface;

#ifdef __cplusplus
}
#endif
#endif
