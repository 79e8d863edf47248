/* SPDX-License-Identifier: MIT */
/* A test double for libhsakmt.so.1, the kernel-driver layer under Debian's ROCr
 * 5.2.3 (libhsa-runtime64.so.1 links it dynamically, at version node HSAKMT_1).
 * It is the only fake between the test application and the real ROCr: it
 * answers the ROCr's calls from host memory, with no /dev/kfd and no GPU.
 *
 * Topology: one node that has CPU cores and a gfx90a GPU (an APU). ROCr makes a
 * CPU agent and a GPU agent of it, and because the GPU node has CPU cores it
 * gives the GPU agent the FULL profile (amd_gpu_agent.cpp): the loader then
 * places code segments in host memory it maps itself and copies them with
 * memcpy (amd_loader_context.cpp, MappedMemory). A discrete node (BASE profile)
 * would copy them with blit kernels on a GPU queue, i.e. GPU execution, which no
 * double here provides. gfx90a because ROCr 5.2 knows no gfx12 processor.
 *
 * Entry points: ROCr 5.2.3 imports 42 hsaKmt* functions and binds them all at
 * load (BIND_NOW), so every one is defined. Those the APU topology needs from
 * hsa_init to hsa_shut_down are implemented; the others print
 * "kmt-double: unexpected call" and return HSAKMT_STATUS_NOT_SUPPORTED, and
 * kmt_double_query() counts them. KMT_DOUBLE_TRACE=1 prints every call. */
#define _GNU_SOURCE
#include <errno.h>
#include <hsakmt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "kmt_double.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmt_double_state g_state;

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void trace(const char *fmt, ...) {
  static int enabled = -1;
  if (enabled < 0) {
    const char *v = getenv("KMT_DOUBLE_TRACE");
    enabled = v != NULL && strcmp(v, "1") == 0;
  }
  if (!enabled)
    return;
  va_list ap;
  va_start(ap, fmt);
  fputs("kmt-double: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void count_call(void) { __atomic_add_fetch(&g_state.calls, 1, __ATOMIC_RELAXED); }

EXPORT void kmt_double_query(struct kmt_double_state *state) {
  pthread_mutex_lock(&g_lock);
  *state = g_state;
  state->calls = __atomic_load_n(&g_state.calls, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_lock);
}

/* ---- driver and topology ------------------------------------------------------ */

EXPORT HSAKMT_STATUS hsaKmtOpenKFD(void) {
  count_call();
  trace("OpenKFD");
  pthread_mutex_lock(&g_lock);
  g_state.kfd_opens++;
  pthread_mutex_unlock(&g_lock);
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtCloseKFD(void) {
  count_call();
  trace("CloseKFD");
  pthread_mutex_lock(&g_lock);
  HSAKMT_STATUS status = HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED;
  if (g_state.kfd_opens > 0) {
    g_state.kfd_opens--;
    status = HSAKMT_STATUS_SUCCESS;
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

/* KFD interface 1.8: what a 5.x kernel reports; ROCr only needs >= 1.x. */
EXPORT HSAKMT_STATUS hsaKmtGetVersion(HsaVersionInfo *info) {
  count_call();
  trace("GetVersion");
  info->KernelInterfaceMajorVersion = 1;
  info->KernelInterfaceMinorVersion = 8;
  return HSAKMT_STATUS_SUCCESS;
}

/* The debugger runtime interface needs a newer KFD: ROCr carries on without it. */
EXPORT HSAKMT_STATUS hsaKmtRuntimeEnable(void *r_debug, bool setup_ttmp) {
  count_call();
  trace("RuntimeEnable(%p, %d) -> NOT_SUPPORTED", r_debug, setup_ttmp);
  return HSAKMT_STATUS_NOT_SUPPORTED;
}

EXPORT HSAKMT_STATUS hsaKmtRuntimeDisable(void) {
  count_call();
  trace("RuntimeDisable");
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtAcquireSystemProperties(HsaSystemProperties *props) {
  count_call();
  trace("AcquireSystemProperties");
  memset(props, 0, sizeof(*props));
  props->NumNodes = 1;
  props->PlatformOem = 0x414d44; /* "AMD" */
  props->PlatformId = 1;
  props->PlatformRev = 1;
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtReleaseSystemProperties(void) {
  count_call();
  trace("ReleaseSystemProperties");
  return HSAKMT_STATUS_SUCCESS;
}

/* The GPU node's ASIC revision, visible as HSA_AMD_AGENT_INFO_ASIC_REVISION. */
#define KMT_DOUBLE_ASIC_REVISION 2

/* Node 0: 2 CPU cores and a gfx90a GPU (EngineId 9.0.10) with 104 CUs. */
EXPORT HSAKMT_STATUS hsaKmtGetNodeProperties(HSAuint32 node, HsaNodeProperties *props) {
  count_call();
  trace("GetNodeProperties(%u)", node);
  if (node != 0)
    return HSAKMT_STATUS_INVALID_NODE_UNIT;
  memset(props, 0, sizeof(*props));
  props->NumCPUCores = 2; /* an APU node: FULL profile for the GPU agent */
  props->NumFComputeCores = 104 * 4;
  props->NumMemoryBanks = 3; /* system memory, LDS aperture, scratch aperture */
  props->NumCaches = 0;
  props->NumIOLinks = 0;
  props->CComputeIdLo = 0;
  props->FComputeIdLo = 0x80000000u;
  props->Capability.ui32.DoorbellType = 2;
  props->Capability.ui32.QueueSizePowerOfTwo = 1;
  props->Capability.ui32.QueueSize32bit = 1;
  props->Capability.ui32.SRAM_EDCSupport = 0;
  props->Capability.ui32.ASICRevision = KMT_DOUBLE_ASIC_REVISION;
  props->MaxWavesPerSIMD = 8;
  props->LDSSizeInKB = 64;
  props->WaveFrontSize = 64;
  props->NumShaderBanks = 8;
  props->NumArrays = 1;
  props->NumCUPerArray = 13;
  props->NumSIMDPerCU = 4;
  props->MaxSlotsScratchCU = 32;
  props->EngineId.ui32.Major = 9;
  props->EngineId.ui32.Minor = 0;
  props->EngineId.ui32.Stepping = 10;
  props->VendorId = 0x1002;
  props->DeviceId = 0x740f;
  props->LocationId = 0x300;
  props->MaxEngineClockMhzFCompute = 1700;
  props->MaxEngineClockMhzCCompute = 2000;
  props->DrmRenderMinor = 128;
  props->NumSdmaEngines = 2;
  props->NumSdmaQueuesPerEngine = 8;
  props->NumCpQueues = 24;
  props->VGPRSizePerCU = 512 * 1024;
  props->SGPRSizePerCU = 0x4000;
  memcpy(props->AMDName, "gfx90a", sizeof("gfx90a"));
  static const char marketing[] = "hotswap kmt double (gfx90a APU)";
  for (size_t i = 0; i < sizeof(marketing) - 1 && i < HSA_PUBLIC_NAME_SIZE - 1; ++i)
    props->MarketingName[i] = (HSAuint16)marketing[i];
  return HSAKMT_STATUS_SUCCESS;
}

/* System memory, and the LDS and scratch apertures KFD reports for a gfx9 GPU
 * (without them ROCr finds no group region and fails agent creation). */
EXPORT HSAKMT_STATUS hsaKmtGetNodeMemoryProperties(HSAuint32 node, HSAuint32 banks,
                                                   HsaMemoryProperties *props) {
  count_call();
  trace("GetNodeMemoryProperties(%u, %u)", node, banks);
  if (node != 0)
    return HSAKMT_STATUS_INVALID_NODE_UNIT;
  const HsaMemoryProperties heaps[3] = {
      {.HeapType = HSA_HEAPTYPE_SYSTEM, .SizeInBytes = 8ull << 30, .Width = 64,
       .MemoryClockMax = 3200},
      {.HeapType = HSA_HEAPTYPE_GPU_LDS, .SizeInBytes = 64ull << 10,
       .VirtualBaseAddress = 0x1000000000000ull},
      {.HeapType = HSA_HEAPTYPE_GPU_SCRATCH, .SizeInBytes = 4ull << 30,
       .VirtualBaseAddress = 0x2000000000000ull},
  };
  for (HSAuint32 i = 0; i < banks; ++i) {
    if (i < 3)
      props[i] = heaps[i];
    else
      memset(&props[i], 0, sizeof(props[i]));
  }
  return HSAKMT_STATUS_SUCCESS;
}

/* No caches are reported (NumCaches = 0): ROCr asks for zero of them. */
EXPORT HSAKMT_STATUS hsaKmtGetNodeCacheProperties(HSAuint32 node, HSAuint32 processor,
                                                  HSAuint32 count, HsaCacheProperties *props) {
  count_call();
  trace("GetNodeCacheProperties(%u, %#x, %u)", node, processor, count);
  if (node != 0)
    return HSAKMT_STATUS_INVALID_NODE_UNIT;
  if (count > 0)
    memset(props, 0, sizeof(*props) * count);
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtGetXNACKMode(HSAint32 *enable) {
  count_call();
  trace("GetXNACKMode");
  *enable = 0; /* the agent's ISA: gfx90a:sramecc-:xnack- */
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtGetClockCounters(HSAuint32 node, HsaClockCounters *counters) {
  count_call();
  (void)node;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  HSAuint64 ns = (HSAuint64)ts.tv_sec * 1000000000ull + (HSAuint64)ts.tv_nsec;
  counters->GPUClockCounter = ns / 10;
  counters->CPUClockCounter = ns;
  counters->SystemClockCounter = ns;
  counters->SystemClockFrequencyHz = 1000000000ull;
  return HSAKMT_STATUS_SUCCESS;
}

/* The trap handler needs a GPU to run on; recording nothing is what a GPU that
 * never traps would show. */
EXPORT HSAKMT_STATUS hsaKmtSetTrapHandler(HSAuint32 node, void *handler, HSAuint64 handler_size,
                                          void *buffer, HSAuint64 buffer_size) {
  count_call();
  (void)buffer;
  (void)buffer_size;
  trace("SetTrapHandler(%u, %p, %#llx)", node, handler, (unsigned long long)handler_size);
  return HSAKMT_STATUS_SUCCESS;
}

/* ---- memory: anonymous host mappings -------------------------------------------- */

/* Page-aligned (2 MiB when asked), read-write, never committed up front: ROCr
 * reserves 4 GiB of scratch it never touches without a GPU. */
EXPORT HSAKMT_STATUS hsaKmtAllocMemory(HSAuint32 node, HSAuint64 size, HsaMemFlags flags,
                                       void **address) {
  count_call();
  HSAuint64 align = flags.ui32.PageSize == HSA_PAGE_SIZE_2MB ? (2ull << 20) : 4096;
  size_t length = (size_t)(size + align);
  int prot = PROT_READ | PROT_WRITE | (flags.ui32.ExecuteAccess ? PROT_EXEC : 0);
  uint8_t *raw = mmap(NULL, length, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) {
    trace("AllocMemory(node %u, %#llx bytes): %s", node, (unsigned long long)size, strerror(errno));
    return HSAKMT_STATUS_NO_MEMORY;
  }
  uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
  if (start > (uintptr_t)raw)
    munmap(raw, start - (uintptr_t)raw);
  uintptr_t end = start + (uintptr_t)size, raw_end = (uintptr_t)raw + length;
  if (raw_end > end)
    munmap((void *)end, raw_end - end);
  *address = (void *)start;
  pthread_mutex_lock(&g_lock);
  g_state.live_allocations++;
  pthread_mutex_unlock(&g_lock);
  trace("AllocMemory(node %u, %#llx bytes, flags %#x) -> %p", node, (unsigned long long)size,
        flags.Value, *address);
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtFreeMemory(void *address, HSAuint64 size) {
  count_call();
  trace("FreeMemory(%p, %#llx bytes)", address, (unsigned long long)size);
  if (address == NULL || munmap(address, (size_t)size) != 0)
    return HSAKMT_STATUS_INVALID_PARAMETER;
  pthread_mutex_lock(&g_lock);
  g_state.live_allocations--;
  pthread_mutex_unlock(&g_lock);
  return HSAKMT_STATUS_SUCCESS;
}

/* One address space: the GPU sees host memory where the host does. */
EXPORT HSAKMT_STATUS hsaKmtMapMemoryToGPUNodes(void *address, HSAuint64 size, HSAuint64 *gpu_va,
                                               HsaMemMapFlags flags, HSAuint64 node_count,
                                               HSAuint32 *nodes) {
  count_call();
  (void)flags;
  (void)nodes;
  trace("MapMemoryToGPUNodes(%p, %#llx bytes, %llu node(s))", address, (unsigned long long)size,
        (unsigned long long)node_count);
  if (gpu_va != NULL)
    *gpu_va = (HSAuint64)(uintptr_t)address;
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtUnmapMemoryToGPU(void *address) {
  count_call();
  trace("UnmapMemoryToGPU(%p)", address);
  return HSAKMT_STATUS_SUCCESS;
}

/* ---- events: host condition variables ----------------------------------------------
 * An HsaEvent is the first member of the double's event, so ROCr's HsaEvent*
 * converts back. HWData2 points at a mailbox word, where a GPU would write the
 * event id (ROCr copies it into its interrupt signals; nothing writes it here). */

struct event {
  HsaEvent event; /* first: ROCr's HsaEvent* is this struct's address */
  bool manual_reset;
  bool signaled;
  HSAuint64 mailbox;
};

static pthread_cond_t g_event_cv = PTHREAD_COND_INITIALIZER;
static HSAuint32 g_next_event_id = 1;

EXPORT HSAKMT_STATUS hsaKmtCreateEvent(HsaEventDescriptor *desc, bool manual_reset, bool signaled,
                                       HsaEvent **out) {
  count_call();
  struct event *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return HSAKMT_STATUS_NO_MEMORY;
  e->manual_reset = manual_reset;
  e->signaled = signaled;
  pthread_mutex_lock(&g_lock);
  e->event.EventId = g_next_event_id++;
  g_state.live_events++;
  pthread_mutex_unlock(&g_lock);
  e->event.EventData.EventType = desc->EventType;
  e->event.EventData.HWData1 = e->event.EventId;
  e->event.EventData.HWData2 = (HSAuint64)(uintptr_t)&e->mailbox;
  e->event.EventData.HWData3 = e->event.EventId;
  *out = &e->event;
  trace("CreateEvent(type %d, manual reset %d) -> id %u", (int)desc->EventType, manual_reset,
        e->event.EventId);
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtDestroyEvent(HsaEvent *event) {
  count_call();
  if (event == NULL)
    return HSAKMT_STATUS_INVALID_HANDLE;
  trace("DestroyEvent(id %u)", event->EventId);
  pthread_mutex_lock(&g_lock);
  g_state.live_events--;
  pthread_mutex_unlock(&g_lock);
  free((struct event *)event);
  return HSAKMT_STATUS_SUCCESS;
}

EXPORT HSAKMT_STATUS hsaKmtSetEvent(HsaEvent *event) {
  count_call();
  if (event == NULL)
    return HSAKMT_STATUS_INVALID_HANDLE;
  pthread_mutex_lock(&g_lock);
  ((struct event *)event)->signaled = true;
  pthread_cond_broadcast(&g_event_cv);
  pthread_mutex_unlock(&g_lock);
  return HSAKMT_STATUS_SUCCESS;
}

/* Waits until one (or all) of the events is signaled, or the timeout passes;
 * auto-reset events are reset by a successful wait. */
EXPORT HSAKMT_STATUS hsaKmtWaitOnMultipleEvents(HsaEvent *events[], HSAuint32 count, bool all,
                                                HSAuint32 milliseconds) {
  count_call();
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += milliseconds / 1000;
  deadline.tv_nsec += (long)(milliseconds % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  HSAKMT_STATUS status = HSAKMT_STATUS_SUCCESS;
  pthread_mutex_lock(&g_lock);
  for (;;) {
    HSAuint32 ready = 0;
    for (HSAuint32 i = 0; i < count; ++i)
      if (events[i] != NULL && ((struct event *)events[i])->signaled)
        ready++;
    if (all ? ready == count : ready > 0) {
      for (HSAuint32 i = 0; i < count; ++i)
        if (events[i] != NULL && !((struct event *)events[i])->manual_reset)
          ((struct event *)events[i])->signaled = false;
      break;
    }
    int rc = 0;
    if (milliseconds == 0)
      rc = ETIMEDOUT;
    else if (milliseconds == HSA_EVENTTIMEOUT_INFINITE)
      rc = pthread_cond_wait(&g_event_cv, &g_lock);
    else
      rc = pthread_cond_timedwait(&g_event_cv, &g_lock, &deadline);
    if (rc == ETIMEDOUT) {
      status = HSAKMT_STATUS_WAIT_TIMEOUT;
      break;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

EXPORT HSAKMT_STATUS hsaKmtWaitOnEvent(HsaEvent *event, HSAuint32 milliseconds) {
  return hsaKmtWaitOnMultipleEvents(&event, 1, true, milliseconds);
}

/* ---- entry points the APU topology never needs --------------------------------------
 * Queues, GWS, SDMA and interop belong to GPU execution or to discrete GPUs;
 * user-pointer registration and pointer queries to hsa_amd_* calls the test
 * application does not make. */

static HSAKMT_STATUS unexpected(const char *name) {
  count_call();
  pthread_mutex_lock(&g_lock);
  g_state.unexpected_calls++;
  pthread_mutex_unlock(&g_lock);
  fprintf(stderr, "kmt-double: unexpected call %s: not supported by this test double\n", name);
  return HSAKMT_STATUS_NOT_SUPPORTED;
}

EXPORT HSAKMT_STATUS hsaKmtSetXNACKMode(HSAint32 enable) {
  (void)enable;
  return unexpected("hsaKmtSetXNACKMode");
}
EXPORT HSAKMT_STATUS hsaKmtGetNodeIoLinkProperties(HSAuint32 node, HSAuint32 count,
                                                   HsaIoLinkProperties *props) {
  (void)node, (void)count, (void)props;
  return unexpected("hsaKmtGetNodeIoLinkProperties");
}
EXPORT HSAKMT_STATUS hsaKmtGetTileConfig(HSAuint32 node, HsaGpuTileConfig *config) {
  (void)node, (void)config;
  return unexpected("hsaKmtGetTileConfig");
}
EXPORT HSAKMT_STATUS hsaKmtCreateQueue(HSAuint32 node, HSA_QUEUE_TYPE type, HSAuint32 percentage,
                                       HSA_QUEUE_PRIORITY priority, void *ring, HSAuint64 size,
                                       HsaEvent *event, HsaQueueResource *resource) {
  (void)node, (void)type, (void)percentage, (void)priority, (void)ring, (void)size, (void)event,
      (void)resource;
  return unexpected("hsaKmtCreateQueue");
}
EXPORT HSAKMT_STATUS hsaKmtUpdateQueue(HSA_QUEUEID queue, HSAuint32 percentage,
                                       HSA_QUEUE_PRIORITY priority, void *ring, HSAuint64 size,
                                       HsaEvent *event) {
  (void)queue, (void)percentage, (void)priority, (void)ring, (void)size, (void)event;
  return unexpected("hsaKmtUpdateQueue");
}
EXPORT HSAKMT_STATUS hsaKmtDestroyQueue(HSA_QUEUEID queue) {
  (void)queue;
  return unexpected("hsaKmtDestroyQueue");
}
EXPORT HSAKMT_STATUS hsaKmtSetQueueCUMask(HSA_QUEUEID queue, HSAuint32 count, HSAuint32 *mask) {
  (void)queue, (void)count, (void)mask;
  return unexpected("hsaKmtSetQueueCUMask");
}
EXPORT HSAKMT_STATUS hsaKmtAllocQueueGWS(HSA_QUEUEID queue, HSAuint32 count, HSAuint32 *first) {
  (void)queue, (void)count, (void)first;
  return unexpected("hsaKmtAllocQueueGWS");
}
EXPORT HSAKMT_STATUS hsaKmtSetMemoryPolicy(HSAuint32 node, HSAuint32 default_policy,
                                           HSAuint32 alternate_policy, void *alternate,
                                           HSAuint64 size) {
  (void)node, (void)default_policy, (void)alternate_policy, (void)alternate, (void)size;
  return unexpected("hsaKmtSetMemoryPolicy");
}
EXPORT HSAKMT_STATUS hsaKmtMapMemoryToGPU(void *address, HSAuint64 size, HSAuint64 *gpu_va) {
  (void)address, (void)size, (void)gpu_va;
  return unexpected("hsaKmtMapMemoryToGPU");
}
EXPORT HSAKMT_STATUS hsaKmtRegisterMemoryWithFlags(void *address, HSAuint64 size,
                                                   HsaMemFlags flags) {
  (void)address, (void)size, (void)flags;
  return unexpected("hsaKmtRegisterMemoryWithFlags");
}
EXPORT HSAKMT_STATUS hsaKmtDeregisterMemory(void *address) {
  (void)address;
  return unexpected("hsaKmtDeregisterMemory");
}
EXPORT HSAKMT_STATUS hsaKmtQueryPointerInfo(const void *pointer, HsaPointerInfo *info) {
  (void)pointer, (void)info;
  return unexpected("hsaKmtQueryPointerInfo");
}
EXPORT HSAKMT_STATUS hsaKmtSetMemoryUserData(const void *pointer, void *user_data) {
  (void)pointer, (void)user_data;
  return unexpected("hsaKmtSetMemoryUserData");
}
EXPORT HSAKMT_STATUS hsaKmtShareMemory(void *address, HSAuint64 size,
                                       HsaSharedMemoryHandle *handle) {
  (void)address, (void)size, (void)handle;
  return unexpected("hsaKmtShareMemory");
}
EXPORT HSAKMT_STATUS hsaKmtRegisterSharedHandle(const HsaSharedMemoryHandle *handle,
                                                void **address, HSAuint64 *size) {
  (void)handle, (void)address, (void)size;
  return unexpected("hsaKmtRegisterSharedHandle");
}
EXPORT HSAKMT_STATUS hsaKmtRegisterSharedHandleToNodes(const HsaSharedMemoryHandle *handle,
                                                       void **address, HSAuint64 *size,
                                                       HSAuint64 node_count, HSAuint32 *nodes) {
  (void)handle, (void)address, (void)size, (void)node_count, (void)nodes;
  return unexpected("hsaKmtRegisterSharedHandleToNodes");
}
EXPORT HSAKMT_STATUS hsaKmtRegisterGraphicsHandleToNodes(HSAuint64 handle,
                                                         HsaGraphicsResourceInfo *info,
                                                         HSAuint64 node_count, HSAuint32 *nodes) {
  (void)handle, (void)info, (void)node_count, (void)nodes;
  return unexpected("hsaKmtRegisterGraphicsHandleToNodes");
}
EXPORT HSAKMT_STATUS hsaKmtSVMSetAttr(void *start, HSAuint64 size, unsigned int count,
                                      HSA_SVM_ATTRIBUTE *attrs) {
  (void)start, (void)size, (void)count, (void)attrs;
  return unexpected("hsaKmtSVMSetAttr");
}
EXPORT HSAKMT_STATUS hsaKmtSVMGetAttr(void *start, HSAuint64 size, unsigned int count,
                                      HSA_SVM_ATTRIBUTE *attrs) {
  (void)start, (void)size, (void)count, (void)attrs;
  return unexpected("hsaKmtSVMGetAttr");
}
