/* arch.h — GPU arch files (perf-model spec §5.1–§5.3): loading an arch JSON
 * (name, mem_bw_gbps, memory_gb, host_link, host_link_gbps, gpu_link, gpu_link_gbps,
 * max_achievable_tflops{...}, kind, source),
 * resolving a platform name to a shipped file, detecting the platform from a
 * trace's deviceProperties name, and the exact peak lookup. A tl_arch owns
 * its strings and peak array (tl_arch_free). */
#ifndef TL_ARCH_H
#define TL_ARCH_H

#include <stddef.h>

#include "../util/error.h"

typedef struct tl_arch_tflops {
    char *key;       /* e.g. "matrix_bf16" */
    double tflops;   /* positive and finite */
} tl_arch_tflops;

typedef struct tl_arch {
    char *path;            /* the file it was loaded from */
    char *name;            /* "name", NULL when absent */
    char *kind;            /* "kind" (max_achievable | datasheet_peak), NULL when absent */
    char *source;          /* "source", NULL when absent */
    int has_mem_bw;        /* mem_bw_gbps present (and not null) */
    double mem_bw_gbps;    /* GB/s = 1e9 B/s */
    int has_memory_gb;
    double memory_gb;
    char *host_link;       /* "host_link" (e.g. "PCIe Gen5 x16"), NULL when absent */
    int has_host_link_bw;  /* host_link_gbps present (and not null) */
    double host_link_gbps; /* the host link's GB/s per direction: what host<->device copies are judged against */
    char *gpu_link;        /* "gpu_link" (e.g. "NVLink 4 (18 links)"), NULL when absent */
    int has_gpu_link_bw;   /* gpu_link_gbps present (and not null) */
    double gpu_link_gbps;  /* GPU-to-GPU GB/s per direction: what peer copies are judged against */
    tl_arch_tflops *peaks;   /* max_achievable_tflops in file order (a repeated key keeps its
                            * first position and its last value, like json.loads) */
    size_t n_peaks;
} tl_arch;

/* Loads an arch JSON. The top level must be an object; mem_bw_gbps,
 * host_link_gbps, gpu_link_gbps and each max_achievable_tflops value, when present and not
 * null, must be positive finite numbers; memory_gb a number;
 * name/kind/source/host_link strings. Unknown keys (figure_sources,
 * freq_mhz, num_cus, _reference, ...) are ignored. Returns 0, or -1 with a
 * one-line err "PATH: ..." (out is then zeroed). */
int tl_arch_load_file(const char *path, tl_arch *out, tl_error *err);
/* The same from text already in memory (tests); name is used in messages. */
int tl_arch_load_text(const char *name, const char *text, size_t len, tl_arch *out, tl_error *err);
void tl_arch_free(tl_arch *a);

/* max_achievable_tflops[compute_spec], an exact key lookup with no fallback
 * (§5.1). NaN when arch or spec is NULL or the key is absent. */
double tl_arch_peak(const tl_arch *arch, const char *compute_spec);

/* The shipped arch directory: $TRACELENS_ARCH_DIR, else
 * <exe dir>/../share/tracelens/arch, else the source tree's arch/ (next to
 * TL_SOURCE_LUA_DIR), else the installed one (next to TL_INSTALL_LUA_DIR).
 * Returns 0, or -1 when none exists. */
int tl_arch_dir(char *buf, size_t cap);

/* Resolves a platform name (the file stem, case-insensitive: "MI300X",
 * "h100") to "<dir>/<stem>.json" in dir (NULL: tl_arch_dir()). Returns 0, or
 * -1 with err "unknown GPU platform 'X' (available: A100, ...)". An
 * exact-case match wins over a case-insensitive one. */
int tl_arch_find_platform(const char *name, const char *dir, char *path, size_t cap, tl_error *err);
/* tl_arch_find_platform + tl_arch_load_file. */
int tl_arch_load_platform(const char *name, const char *dir, tl_arch *out, tl_error *err);

/* Maps a deviceProperties name to a shipped platform: "NVIDIA H100 80GB
 * HBM3" -> "H100", "AMD Instinct MI300X VF" -> "MI300X", "Tesla
 * V100-SXM2-32GB" -> "V100-SXM2". Recognises A100, A10, H100, H200, B200,
 * GB200, L4, L40S, V100-SXM2, V100-PCIE, MI210, MI250X, MI300X, MI325X,
 * MI355X as whole words (case-insensitive; GH200/MI300A/MI350X/V100S/gfx
 * names are not matched). NULL when unknown. */
const char *tl_arch_detect(const char *device_name);

#endif
