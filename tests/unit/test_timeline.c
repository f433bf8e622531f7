/* Interval primitives and the timeline buckets, hand-checked. */
#include "test.h"
#include "trace/timeline.h"

static void merge_and_subtract(void)
{
    tl_interval a[] = {{5, 10}, {0, 3}, {3, 4}, {12, 20}, {8, 11}};
    size_t n = tl_merge(a, 5);
    CHECK_I64(n, 3);
    CHECK_I64(a[0].s, 0);
    CHECK_I64(a[0].e, 4); /* touching intervals merge */
    CHECK_I64(a[1].s, 5);
    CHECK_I64(a[1].e, 11);
    CHECK_I64(a[2].e, 20);
    CHECK_I64(tl_length(a, n), 4 + 6 + 8);

    tl_interval b[] = {{2, 6}, {9, 15}, {18, 30}};
    tl_interval out[8];
    size_t m = tl_subtract(a, n, b, 3, out); /* b - a */
    CHECK_I64(m, 3);
    CHECK_I64(out[0].s, 4);
    CHECK_I64(out[0].e, 5);
    CHECK_I64(out[1].s, 11);
    CHECK_I64(out[1].e, 12);
    CHECK_I64(out[2].s, 20);
    CHECK_I64(out[2].e, 30);
    CHECK_I64(tl_subtract(b, 3, b, 3, out), 0);
    CHECK_I64(tl_subtract(a, 0, b, 3, out), 3);
}

static void buckets(void)
{
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == TL_B_COMM);
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "void RCCL_kernel") == TL_B_COMM);
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "cross_device_reduce_1stage") == TL_B_COMM);
    CHECK(tl_gpu_bucket(TL_CAT_GPU_MEMSET, "Memset (Device)") == TL_B_COMP);
    CHECK(tl_gpu_bucket(TL_CAT_GPU_MEMCPY, "Memcpy HtoD (Pinned -> Device)") == TL_B_MEMCPY);
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "MEMORY_COPY_HOST_TO_DEVICE") == TL_B_MEMCPY);
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "__amd_rocclr_copyBufferRectAligned.kd") == TL_B_MEMCPY);
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "__amd_rocclr_copyBufferX") == TL_B_COMP);
    CHECK(tl_gpu_bucket(TL_CAT_KERNEL, "__amd_rocclr_fillBufferAligned.kd") == TL_B_COMP);
    CHECK(tl_gpu_bucket(TL_CAT_GPU_MEMSET, "MEMORY_COPY_HOST_TO_DEVICE") == TL_B_COMP);
}

void suite_timeline(void)
{
    merge_and_subtract();
    buckets();
}
