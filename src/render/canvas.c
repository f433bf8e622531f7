#include "canvas.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/outfile.h"
#include "../util/vec.h"

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

int tl_rgb_parse(const char *text, tl_rgb *out)
{
    if (!text || text[0] != '#' || strlen(text) != 7) return -1;
    int v[6];
    for (int i = 0; i < 6; i++)
        if ((v[i] = hexval(text[1 + i])) < 0) return -1;
    out->r = (unsigned char)(v[0] * 16 + v[1]);
    out->g = (unsigned char)(v[2] * 16 + v[3]);
    out->b = (unsigned char)(v[4] * 16 + v[5]);
    return 0;
}

int tl_canvas_init(tl_canvas *c, int w, int h, tl_rgb bg, tl_error *err)
{
    c->w = c->h = 0;
    c->px = NULL;
    if (w < 1 || h < 1 || w > TL_CANVAS_MAX_SIDE || h > TL_CANVAS_MAX_SIDE) {
        tl_error_set(err, "canvas: size %dx%d is outside 1..%d pixels a side", w, h, TL_CANVAS_MAX_SIDE);
        return -1;
    }
    size_t n = (size_t)w * (size_t)h;
    c->px = tl_xmalloc(n * 3);
    for (size_t i = 0; i < n; i++) {
        c->px[3 * i] = bg.r;
        c->px[3 * i + 1] = bg.g;
        c->px[3 * i + 2] = bg.b;
    }
    c->w = w;
    c->h = h;
    return 0;
}

void tl_canvas_free(tl_canvas *c)
{
    free(c->px);
    c->px = NULL;
    c->w = c->h = 0;
}

tl_rgb tl_canvas_get(const tl_canvas *c, int x, int y)
{
    const unsigned char *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    return (tl_rgb){p[0], p[1], p[2]};
}

static unsigned char mix(unsigned char dst, unsigned char src, double a)
{
    return (unsigned char)lround(dst + (src - dst) * a);
}

/* Blends col over pixel (x, y) with opacity a (0..1); (x, y) is inside. */
static void blend(tl_canvas *c, int x, int y, tl_rgb col, double a)
{
    if (!(a > 0)) return; /* also NaN */
    if (a > 1) a = 1;
    unsigned char *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = mix(p[0], col.r, a);
    p[1] = mix(p[1], col.g, a);
    p[2] = mix(p[2], col.b, a);
}

/* Length of [lo, hi] inside pixel [i, i + 1). */
static double overlap(double lo, double hi, int i)
{
    double a = lo > i ? lo : i, b = hi < i + 1 ? hi : i + 1;
    return b > a ? b - a : 0;
}

static int clampi(double v, int lo, int hi)
{
    if (!(v > lo)) return lo; /* also NaN */
    if (v > hi) return hi;
    return (int)v;
}

void tl_canvas_fill_rect(tl_canvas *c, double x0, double y0, double x1, double y1, tl_rgb col, double alpha)
{
    if (isnan(x0) || isnan(y0) || isnan(x1) || isnan(y1)) return;
    if (x1 < x0) {
        double t = x0;
        x0 = x1;
        x1 = t;
    }
    if (y1 < y0) {
        double t = y0;
        y0 = y1;
        y1 = t;
    }
    int i0 = clampi(floor(x0), 0, c->w), i1 = clampi(ceil(x1), 0, c->w);
    int j0 = clampi(floor(y0), 0, c->h), j1 = clampi(ceil(y1), 0, c->h);
    for (int j = j0; j < j1; j++) {
        double cy = overlap(y0, y1, j);
        for (int i = i0; i < i1; i++) blend(c, i, j, col, alpha * cy * overlap(x0, x1, i));
    }
}

void tl_canvas_line(tl_canvas *c, double x0, double y0, double x1, double y1, double width, tl_rgb col,
                    double alpha)
{
    double hw = width / 2;
    if (y0 == y1) {
        tl_canvas_fill_rect(c, x0, y0 - hw, x1, y0 + hw, col, alpha);
        return;
    }
    if (x0 == x1) {
        tl_canvas_fill_rect(c, x0 - hw, y0, x0 + hw, y1, col, alpha);
        return;
    }
    double dx = x1 - x0, dy = y1 - y0, len = sqrt(dx * dx + dy * dy);
    if (!isfinite(len) || !isfinite(hw)) return;
    double ux = dx / len, uy = dy / len;
    int i0 = clampi(floor(fmin(x0, x1) - hw), 0, c->w), i1 = clampi(ceil(fmax(x0, x1) + hw), 0, c->w);
    int j0 = clampi(floor(fmin(y0, y1) - hw), 0, c->h), j1 = clampi(ceil(fmax(y0, y1) + hw), 0, c->h);
    for (int j = j0; j < j1; j++)
        for (int i = i0; i < i1; i++) {
            int in = 0;
            for (int s = 0; s < 16; s++) {
                double px = i + (s % 4 + 0.5) / 4 - x0, py = j + (s / 4 + 0.5) / 4 - y0;
                double t = px * ux + py * uy, d = fabs(px * uy - py * ux);
                if (t >= 0 && t <= len && d <= hw) in++;
            }
            blend(c, i, j, col, alpha * in / 16.0);
        }
}

void tl_canvas_stroke_rect(tl_canvas *c, double x0, double y0, double x1, double y1, double width, tl_rgb col,
                           double alpha)
{
    double hw = width / 2;
    tl_canvas_fill_rect(c, x0 - hw, y0 - hw, x1 + hw, y0 + hw, col, alpha);
    tl_canvas_fill_rect(c, x0 - hw, y1 - hw, x1 + hw, y1 + hw, col, alpha);
    tl_canvas_fill_rect(c, x0 - hw, y0 + hw, x0 + hw, y1 - hw, col, alpha);
    tl_canvas_fill_rect(c, x1 - hw, y0 + hw, x1 + hw, y1 - hw, col, alpha);
}

void tl_canvas_blend_mask(tl_canvas *c, int x, int y, const unsigned char *mask, int mw, int mh, int pitch,
                          tl_rgb col)
{
    for (int r = 0; r < mh; r++) {
        int j = y + r;
        if (j < 0 || j >= c->h) continue;
        const unsigned char *row = mask + (ptrdiff_t)r * pitch;
        for (int k = 0; k < mw; k++) {
            int i = x + k;
            if (i >= 0 && i < c->w && row[k]) blend(c, i, j, col, row[k] / 255.0);
        }
    }
}

/* ------------------------------------------------------------------ PNG */

/* libpng reports errors through longjmp; the message is kept here. */
typedef struct png_job {
    const tl_canvas *c;
    FILE *f;
    png_uint_32 ppm; /* pixels per metre */
    char msg[256];
} png_job;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_job *job = png_get_error_ptr(png);
    snprintf(job->msg, sizeof job->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* Everything that may longjmp happens below the setjmp, and nothing that
 * lives in a register is changed after it. */
static int png_encode(png_job *job, png_structp png, png_infop info)
{
    if (setjmp(png_jmpbuf(png))) return -1;
    const tl_canvas *c = job->c;
    png_init_io(png, job->f);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (job->ppm) png_set_pHYs(png, info, job->ppm, job->ppm, PNG_RESOLUTION_METER);
    /* Charts are flat colours: unfiltered rows at zlib level 3 take a file
     * no larger than libpng's default (every filter tried per row, level 6)
     * in a fifth of the instructions (the analysis's chart: 255 M -> 46 M,
     * 43.9 -> 42.9 KB). */
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_compression_level(png, 3);
    png_write_info(png, info);
    for (int y = 0; y < c->h; y++) png_write_row(png, c->px + (size_t)y * (size_t)c->w * 3);
    png_write_end(png, info);
    return 0;
}

int tl_canvas_write_png(const tl_canvas *c, const char *path, double dpi, tl_error *err)
{
    tl_outfile of;
    if (tl_outfile_open(&of, path, err) != 0) return -1;
    png_job job = {.c = c, .f = of.f, .ppm = dpi > 0 && dpi < 1e6 ? (png_uint_32)lround(dpi / 0.0254) : 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    int rc = info ? png_encode(&job, png, info) : -1;
    png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
    if (rc != 0) {
        tl_error_set(err, "%s: cannot encode PNG: %s", path, job.msg[0] ? job.msg : "out of memory");
        tl_outfile_abort(&of);
        return -1;
    }
    return tl_outfile_commit(&of, err);
}
