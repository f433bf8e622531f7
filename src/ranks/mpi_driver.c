/* mpi_driver.c — `mpirun -np P tracelens ranks ...` (built only with
 * -DTRACELENS_MPI=ON; docs/ranks.md "MPI"). Process 0 parses the options and
 * resolves the rank traces exactly as a single process does, then hands out
 * the traces largest first, each to the process with the fewest bytes so far
 * (a broadcast of the plan). Every process runs the per-rank pass
 * (mapreduce.h) on its traces and encodes each rank as a .tls image
 * (summary_file.h); the images go to process 0 by MPI_Gatherv (in rounds of
 * at most INT_MAX / P bytes), which decodes them in the single-process order
 * and builds and writes the report itself, so the output is the same bytes
 * as a single-process run. Every process exits with process 0's status
 * (a broadcast). Waits never spin (wait_idle). Once the gather is done,
 * process 0 widens its CPU affinity to the CPUs of all the job's processes
 * on its node (node_cpus): mpirun may bind each process to one core (Open
 * MPI does for up to 2 processes), and the report's writer threads would
 * otherwise share that core while the other processes sleep. Owns the MPI session (MPI_Init .. MPI_Finalize) for the
 * command's duration; no state outside the call. */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/malloc_tune.h"
#include "../util/msort.h"
#include "../util/vec.h"
#include "cli.h"
#include "mapreduce.h"

int tl_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

/* Waits for r without spinning: a process waiting for the others (its
 * share done early, or for process 0's report) leaves the core to them,
 * which matters when processes share cores. */
static void wait_idle(MPI_Request *r)
{
    int done = 0;
    struct timespec ts = {0, 200000}; /* 0.2 ms */
    for (;;) {
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
        if (done) return;
        nanosleep(&ts, NULL);
    }
}

/* A broadcast from process 0 through wait_idle (every process calls this
 * one, never MPI_Bcast: blocking and non-blocking collectives do not match). */
static void bcast_idle(void *buf, int n, MPI_Datatype type)
{
    MPI_Request r;
    MPI_Ibcast(buf, n, type, 0, MPI_COMM_WORLD, &r);
    wait_idle(&r);
}

typedef struct mpi_ctx {
    int me, np;
    int planned;          /* process 0: the plan went out */
    uint8_t *all;         /* process 0: the bytes gathered, process by process */
    uint8_t **pbuf;       /* process 0: each process's bytes (into all) */
    const uint8_t **img;  /* process 0: file i's image (into pbuf) */
    size_t *len;
    size_t n;
} mpi_ctx;

/* The CPUs this node's processes are bound to, together: each process's
 * affinity mask ORed over the node's communicator (every process of the
 * node calls this). Process 0 takes it once the gather is done: the other
 * processes then only wait (asleep) for the report, so the threads process
 * 0 starts from there on (the report's CSV and workbook writers) may use
 * their cores too, not only the one core mpirun bound process 0 to. The
 * job's own CPUs, not every CPU of the node: a taskset, a rankfile or
 * another job's processes on the node keep theirs. NULL when unknown. */
static cpu_set_t *node_cpus(MPI_Comm node, size_t *size)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    int ncpu = conf > CPU_SETSIZE ? (int)conf : CPU_SETSIZE;
    size_t sz = CPU_ALLOC_SIZE(ncpu);
    cpu_set_t *mine = tl_xcalloc(sz, 1), *all = tl_xcalloc(sz, 1);
    if (sched_getaffinity(0, sz, mine) != 0) memset(mine, 0, sz); /* adds nothing */
    MPI_Request r;
    MPI_Iallreduce(mine, all, (int)sz, MPI_BYTE, MPI_BOR, node, &r);
    wait_idle(&r);
    free(mine);
    if (CPU_COUNT_S(sz, all) == 0) {
        free(all);
        return NULL;
    }
    *size = sz;
    return all;
}

/* The per-rank pass of this process's files (owner[i] == me, in `order`),
 * their images gathered on process 0 into ctx. Collective over the world. */
static void run_share(mpi_ctx *ctx, const char *const *paths, const long *name_ranks, const int *owner,
                      const size_t *order, size_t n, int from_distinfo)
{
    tl_load_opts lo;
    memset(&lo, 0, sizeof lo);
    /* scan threads: the node's cores shared by its processes */
    MPI_Comm node;
    int local = 1;
    cpu_set_t *cpus = NULL;
    size_t cpusz = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &local);
        cpus = node_cpus(node, &cpusz);
        MPI_Comm_free(&node);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN), t = cores > 0 ? cores / (local > 0 ? local : 1) : 1;
    lo.threads = t < 1 ? 1 : (int)t;
    tl_sbuf mine;
    tl_sb_init(&mine);
    tl_malloc_many_traces(1); /* one trace's freed buffers serve the next */
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        if (owner[i] != ctx->me) continue;
        tl_error err;
        tl_ranks_rank_image(paths[i], name_ranks[i], from_distinfo, &lo, &mine, &err);
    }
    /* gather: sizes to everyone, then the bytes in rounds that fit an int */
    uint64_t my = mine.len;
    uint64_t *lens = tl_xmalloc((size_t)ctx->np * sizeof *lens);
    MPI_Request req;
    MPI_Iallgather(&my, 1, MPI_UINT64_T, lens, 1, MPI_UINT64_T, MPI_COMM_WORLD, &req);
    wait_idle(&req);
    uint64_t chunk = (uint64_t)INT_MAX / (uint64_t)ctx->np, maxlen = 0;
    const char *env = getenv("TRACELENS_MPI_CHUNK"); /* tests: force several rounds */
    if (env && atoll(env) > 0 && (uint64_t)atoll(env) < chunk) chunk = (uint64_t)atoll(env);
    for (int p = 0; p < ctx->np; p++)
        if (lens[p] > maxlen) maxlen = lens[p];
    int *counts = tl_xmalloc((size_t)ctx->np * sizeof *counts), *displs = tl_xmalloc((size_t)ctx->np * sizeof *displs);
    /* one round (every process's bytes fit a chunk, so their sum fits an
     * int): straight into place; more: through tmp, a round at a time */
    int direct = maxlen <= chunk;
    uint8_t *tmp = NULL;
    if (ctx->me == 0) {
        uint64_t total = 0;
        for (int p = 0; p < ctx->np; p++) total += lens[p];
        ctx->all = tl_xmalloc((size_t)total + 1);
        ctx->pbuf = tl_xcalloc((size_t)ctx->np, sizeof *ctx->pbuf);
        total = 0;
        for (int p = 0; p < ctx->np; p++) {
            ctx->pbuf[p] = ctx->all + total;
            total += lens[p];
        }
        if (!direct) tmp = tl_xmalloc((size_t)(chunk * (uint64_t)ctx->np) + 1);
    }
    for (uint64_t off = 0; off < maxlen; off += chunk) {
        int total = 0;
        for (int p = 0; p < ctx->np; p++) {
            uint64_t left = lens[p] > off ? lens[p] - off : 0;
            counts[p] = (int)(left < chunk ? left : chunk);
            displs[p] = total;
            total += counts[p];
        }
        /* direct: counts are the whole lengths, so displs are the offsets in all */
        MPI_Gatherv(counts[ctx->me] ? mine.s + off : NULL, counts[ctx->me], MPI_BYTE, direct ? ctx->all : tmp, counts,
                    displs, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (ctx->me == 0 && !direct)
            for (int p = 0; p < ctx->np; p++)
                if (counts[p]) memcpy(ctx->pbuf[p] + off, tmp + displs[p], (size_t)counts[p]);
    }
    free(tmp);
    free(counts);
    free(displs);
    tl_sb_free(&mine);
    if (ctx->me == 0 && cpus) (void)sched_setaffinity(0, cpusz, cpus); /* a refusal keeps the binding */
    free(cpus);
    if (ctx->me == 0) {
        /* the k-th image of process p is its k-th file in `order` */
        ctx->n = n;
        ctx->img = tl_xcalloc(n + 1, sizeof *ctx->img);
        ctx->len = tl_xcalloc(n + 1, sizeof *ctx->len);
        uint64_t *at = tl_xcalloc((size_t)ctx->np, sizeof *at);
        for (size_t k = 0; k < n; k++) {
            size_t i = order[k];
            int p = owner[i];
            tl_error err;
            size_t sz = at[p] < lens[p] ? tl_tls_image_size(ctx->pbuf[p] + at[p], lens[p] - at[p], paths[i], &err) : 0;
            if (!sz) continue; /* take() reports the missing image */
            ctx->img[i] = ctx->pbuf[p] + at[p];
            ctx->len[i] = sz;
            at[p] += sz;
        }
        free(at);
    }
    free(lens);
}

static int cmp_larger_first(void *v, size_t a, size_t b)
{
    const uint64_t *s = v;
    return s[a] > s[b] ? -1 : s[a] < s[b]; /* ties: file order (the sort is stable) */
}

/* The order of the files (largest first) and their owners: each file to
 * the process with the fewest bytes so far (ties the lowest process). */
static void plan(const char *const *paths, size_t n, int np, size_t *order, int *owner)
{
    uint64_t *size = tl_xmalloc((n + 1) * sizeof *size), *load = tl_xcalloc((size_t)np, sizeof *load);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        size[i] = stat(paths[i], &st) == 0 ? (uint64_t)st.st_size : 0;
        order[i] = i;
    }
    tl_msort(order, n, cmp_larger_first, size);
    for (size_t k = 0; k < n; k++) {
        int best = 0;
        for (int p = 1; p < np; p++)
            if (load[p] < load[best]) best = p;
        owner[order[k]] = best;
        load[best] += size[order[k]] + 1;
    }
    free(size);
    free(load);
}

/* The plan (native byte order: one machine type per job): after the
 * header {n, from_distinfo, bytes}, the processing order (u64 file index per
 * position), then per file i64 rank from the name, i32 owner, u32 path
 * length, the path. */
static void put(tl_sbuf *b, const void *p, size_t n) { tl_sb_putn(b, p, n); }

static int root_map(tl_ranks_source *s, const char *const *paths, const long *name_ranks, size_t n, int from_distinfo,
                    tl_error *err)
{
    mpi_ctx *ctx = s->impl;
    size_t *order = tl_xmalloc((n + 1) * sizeof *order);
    int *owner = tl_xmalloc((n + 1) * sizeof *owner);
    plan(paths, n, ctx->np, order, owner);
    if (!s->quiet)
        fprintf(stderr, "tracelens: MPI: %zu rank traces over %d processes (largest first)\n", n, ctx->np);
    tl_sbuf b;
    tl_sb_init(&b);
    for (size_t k = 0; k < n; k++) {
        uint64_t o = order[k];
        put(&b, &o, sizeof o);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t r = name_ranks[i];
        int32_t o = owner[i];
        uint32_t len = (uint32_t)strlen(paths[i]);
        put(&b, &r, sizeof r);
        put(&b, &o, sizeof o);
        put(&b, &len, sizeof len);
        put(&b, paths[i], len);
    }
    if (b.len > INT_MAX) {
        tl_error_set(err, "MPI: the list of %zu rank traces is too long to broadcast", n);
        tl_sb_free(&b);
        free(order);
        free(owner);
        return -1;
    }
    int64_t head[3] = {(int64_t)n, from_distinfo, (int64_t)b.len};
    bcast_idle(head, 3, MPI_INT64_T);
    bcast_idle(b.s, (int)b.len, MPI_BYTE);
    ctx->planned = 1;
    run_share(ctx, paths, name_ranks, owner, order, n, from_distinfo);
    tl_sb_free(&b);
    free(order);
    free(owner);
    return 0;
}

static int root_take(tl_ranks_source *s, size_t i, const char *path, tl_coll_set *cs, tl_rank_info *info,
                     tl_error *err)
{
    mpi_ctx *ctx = s->impl;
    if (i >= ctx->n || !ctx->img[i]) {
        memset(info, 0, sizeof *info);
        info->rank = -1;
        tl_error_set(err, "%s: MPI: no summary came back for this rank trace", path);
        return -1;
    }
    return tl_tls_decode(ctx->img[i], ctx->len[i], path, cs, info, NULL, err);
}

/* A process other than 0: receive the plan, run its share, gather. Returns
 * the exit status process 0 broadcasts. */
static int worker(mpi_ctx *ctx)
{
    int64_t head[3];
    bcast_idle(head, 3, MPI_INT64_T);
    if (head[0] < 0) return (int)head[1]; /* process 0 stopped before the per-rank pass */
    size_t n = (size_t)head[0];
    uint8_t *msg = tl_xmalloc((size_t)head[2] + 1);
    bcast_idle(msg, (int)head[2], MPI_BYTE);
    size_t *order = tl_xmalloc((n + 1) * sizeof *order);
    int *owner = tl_xmalloc((n + 1) * sizeof *owner);
    long *ranks = tl_xmalloc((n + 1) * sizeof *ranks);
    char **paths = tl_xcalloc(n + 1, sizeof *paths);
    const uint8_t *p = msg;
    for (size_t k = 0; k < n; k++, p += sizeof(uint64_t)) {
        uint64_t o;
        memcpy(&o, p, sizeof o);
        order[k] = (size_t)o;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t r;
        int32_t o;
        uint32_t len;
        memcpy(&r, p, sizeof r), p += sizeof r;
        memcpy(&o, p, sizeof o), p += sizeof o;
        memcpy(&len, p, sizeof len), p += sizeof len;
        paths[i] = tl_xmalloc((size_t)len + 1);
        memcpy(paths[i], p, len);
        paths[i][len] = 0;
        p += len;
        ranks[i] = (long)r;
        owner[i] = o;
    }
    run_share(ctx, (const char *const *)paths, ranks, owner, order, n, (int)head[1]);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    free(ranks);
    free(owner);
    free(order);
    free(msg);
    int rc = 1;
    bcast_idle(&rc, 1, MPI_INT);
    return rc;
}

int tl_ranks_mpi_cli(int argc, char **argv)
{
    MPI_Init(NULL, NULL);
    mpi_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.me);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx.np);
    int rc;
    if (ctx.me == 0) {
        tl_ranks_source src = {.map = root_map, .take = root_take, .impl = &ctx};
        rc = tl_ranks_cli_with(argc, argv, &src);
        if (!ctx.planned) {
            int64_t head[3] = {-1, rc, 0};
            bcast_idle(head, 3, MPI_INT64_T);
        } else bcast_idle(&rc, 1, MPI_INT);
        free(ctx.all);
        free(ctx.pbuf);
        free(ctx.img);
        free(ctx.len);
    } else rc = worker(&ctx);
    MPI_Finalize();
    return rc;
}
