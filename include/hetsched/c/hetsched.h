/* SPDX-License-Identifier: MIT */
/* hetsched C API umbrella header: includes every C header. Link with -lhetsched_c.
 * Overview, error and lifetime rules, ABI promise: docs/c_api.md. */
#ifndef HETSCHED_C_HETSCHED_H
#define HETSCHED_C_HETSCHED_H

#include <hetsched/c/capacity.h>
#include <hetsched/c/cluster.h>
#include <hetsched/c/common.h>
#include <hetsched/c/decision.h>
#include <hetsched/c/hived.h>
#include <hetsched/c/packer.h>
#include <hetsched/c/policy.h>
#include <hetsched/c/state.h>

#endif /* HETSCHED_C_HETSCHED_H */
