#include "chunk_cache.h"

#include <lauxlib.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct entry {
    char *path;
    off_t size;
    struct timespec mtime;
    char *code; /* the bytecode; immutable once the entry is published */
    size_t len;
} entry;

struct tl_chunk_cache {
    pthread_mutex_t mu;
    entry *v;
    size_t n, cap;
};

tl_chunk_cache *tl_chunk_cache_new(void)
{
    tl_chunk_cache *c = calloc(1, sizeof *c);
    if (c && pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

void tl_chunk_cache_free(tl_chunk_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].path);
        free(c->v[i].code);
    }
    free(c->v);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int same_file(const entry *e, const char *path, const struct stat *st)
{
    return !strcmp(e->path, path) && e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
           e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

typedef struct dump_buf {
    char *p;
    size_t n, cap;
    int failed;
} dump_buf;

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    dump_buf *b = ud;
    if (b->failed) return 1;
    if (b->n + sz > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + sz) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return 1;
        }
        b->p = q, b->cap = cap;
    }
    memcpy(b->p + b->n, p, sz);
    b->n += sz;
    return 0;
}

/* Keeps the bytecode of the function on top of L for the file (a copy;
 * another state may have published it meanwhile: the first one stays). */
static void publish(tl_chunk_cache *c, lua_State *L, const char *path, const struct stat *st)
{
    dump_buf b = {0};
    if (lua_dump(L, dump_writer, &b, 0) != 0 || b.failed) {
        free(b.p);
        return;
    }
    char *name = strdup(path);
    if (!name) {
        free(b.p);
        return;
    }
    pthread_mutex_lock(&c->mu);
    int have = 0;
    for (size_t i = 0; i < c->n && !have; i++) have = same_file(&c->v[i], path, st);
    if (!have && c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        entry *v = realloc(c->v, cap * sizeof *v);
        if (v) c->v = v, c->cap = cap;
    }
    /* entries move with realloc: a lookup keeps the code pointer, which
     * never moves, not the entry */
    if (!have && c->n < c->cap) {
        c->v[c->n++] = (entry){name, st->st_size, st->st_mtim, b.p, b.n};
        name = NULL, b.p = NULL;
    }
    pthread_mutex_unlock(&c->mu);
    free(name);
    free(b.p);
}

int tl_chunk_cache_load(tl_chunk_cache *c, lua_State *L, const char *path)
{
    struct stat st;
    if (!c || stat(path, &st) != 0) return luaL_loadfilex(L, path, "t");
    const char *code = NULL;
    size_t len = 0;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n && !code; i++)
        if (same_file(&c->v[i], path, &st)) code = c->v[i].code, len = c->v[i].len;
    pthread_mutex_unlock(&c->mu);
    if (code) {
        /* the chunk name is in the bytecode ("@path", as loadfile gives) */
        return luaL_loadbufferx(L, code, len, path, "b");
    }
    int st_load = luaL_loadfilex(L, path, "t");
    if (st_load == LUA_OK) publish(c, L, path, &st);
    return st_load;
}
