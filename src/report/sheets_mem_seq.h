/* sheets_mem_seq.h — tracelens's own sheets after user_annotations (issue
 * 16; not the reference's): kernel_sequences (trace/kernel_ngrams.h),
 * memcpy_summary (trace/copies.h, judged against the arch file's links),
 * memory_peak and memory_timeline (trace/mem_timeline.h). Owns nothing:
 * each returns a new table, or NULL when the trace has nothing for it (no
 * repeated kernel sequence; no copy or set; no `[memory]` events). */
#ifndef TL_SHEETS_MEM_SEQ_H
#define TL_SHEETS_MEM_SEQ_H

#include "../perf/arch.h"
#include "../table/table.h"
#include "../trace/trace.h"

tl_table *tl_sheet_kernel_sequences(const tl_trace *t);
/* The same, from the sequences of t already computed with the default
 * options (tl_kernel_ngrams_compute(t, NULL, k)); k stays the caller's. */
struct tl_kernel_ngrams;
tl_table *tl_sheet_kernel_sequences_of(const tl_trace *t, const struct tl_kernel_ngrams *k);
/* arch NULL: no reference columns filled. */
tl_table *tl_sheet_memcpy_summary(const tl_trace *t, const tl_arch *arch);
/* Both memory sheets from one pass (NULL, NULL without `[memory]` events). */
void tl_sheets_memory(const tl_trace *t, tl_table **peak, tl_table **timeline);

/* What a copy direction's bandwidth is judged against (copies.h TL_CP_*):
 * "host_link", "hbm", "gpu_link" or NULL, the multiple of the bytes that
 * crosses it (a device copy reads and writes HBM: 2), and the arch's figure
 * (GB/s, 0 when the arch has none). */
const char *tl_copy_reference(int dir, const tl_arch *arch, double *traffic_mult, double *gbps, const char **link);

#endif
