/* SPDX-License-Identifier: MIT */
/* The test-only half of the libhsakmt.so.1 test double (kmt_double.c): what the
 * test application asks it after ROCr's teardown. Exported at the version node
 * KMT_DOUBLE_TEST, next to ROCr 5.2's HSAKMT_1 (kmt_double.map). */
#ifndef HOTSWAP_TESTS_KMT_DOUBLE_H
#define HOTSWAP_TESTS_KMT_DOUBLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the kernel-driver layer holds for ROCr right now. */
struct kmt_double_state {
  uint32_t kfd_opens;          /* hsaKmtOpenKFD minus hsaKmtCloseKFD */
  uint32_t live_allocations;   /* hsaKmtAllocMemory blocks not yet freed */
  uint32_t live_events;        /* hsaKmtCreateEvent events not yet destroyed */
  uint32_t unexpected_calls;   /* entry points this topology never needs (see kmt_double.c) */
  uint64_t calls;              /* every hsaKmt* call so far */
};

void kmt_double_query(struct kmt_double_state *state);

#ifdef __cplusplus
}
#endif

#endif /* HOTSWAP_TESTS_KMT_DOUBLE_H */
