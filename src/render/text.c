#include "text.h"

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_OUTLINE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../util/vec.h"

struct tl_font {
    FT_Library lib;
    FT_Face face;
    char path[1024];
};

/* ------------------------------------------------------------ finding */

static const char *const font_dirs[] = {"/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/TTF",
                                        "/usr/share/fonts/dejavu", "/usr/share/fonts/dejavu-sans-fonts",
                                        "/usr/local/share/fonts", NULL};

static int readable_file(const char *p)
{
    struct stat st;
    FILE *f;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(p, "rb"))) return 0;
    fclose(f);
    return 1;
}

/* The env var when set (error when it names no readable file), else the
 * file in font_dirs; 1 found, 0 not found, -1 error. */
static int find_one(const char *env, const char *file, char *buf, size_t cap, tl_error *err)
{
    const char *e = getenv(env);
    if (e && *e) {
        if (!readable_file(e)) {
            tl_error_set(err, "font: %s=%s is not a readable font file", env, e);
            return -1;
        }
        snprintf(buf, cap, "%s", e);
        return 1;
    }
    for (int i = 0; font_dirs[i]; i++) {
        snprintf(buf, cap, "%s/%s", font_dirs[i], file);
        if (readable_file(buf)) return 1;
    }
    return 0;
}

int tl_font_find(tl_font_style style, char *buf, size_t cap, tl_error *err)
{
    int rc = style == TL_FONT_BOLD ? find_one("TRACELENS_FONT_BOLD", "DejaVuSans-Bold.ttf", buf, cap, err) : 0;
    if (rc == 0) rc = find_one("TRACELENS_FONT", "DejaVuSans.ttf", buf, cap, err);
    if (rc == 1) return 0;
    if (rc == 0)
        tl_error_set(err,
                     "font: DejaVuSans.ttf not found in /usr/share/fonts/{truetype/dejavu,TTF,dejavu,"
                     "dejavu-sans-fonts} or /usr/local/share/fonts; install fonts-dejavu-core or set "
                     "TRACELENS_FONT to a TrueType font file");
    return -1;
}

tl_font *tl_font_open(const char *path, tl_error *err)
{
    tl_font *f = tl_xcalloc(1, sizeof *f);
    if (FT_Init_FreeType(&f->lib) != 0) {
        tl_error_set(err, "font: cannot initialise FreeType");
        free(f);
        return NULL;
    }
    if (FT_New_Face(f->lib, path, 0, &f->face) != 0 || !FT_IS_SCALABLE(f->face)) {
        tl_error_set(err, "font: %s is not a scalable font FreeType can read", path);
        if (f->face) FT_Done_Face(f->face);
        FT_Done_FreeType(f->lib);
        free(f);
        return NULL;
    }
    snprintf(f->path, sizeof f->path, "%s", path);
    return f;
}

void tl_font_close(tl_font *f)
{
    if (!f) return;
    FT_Done_Face(f->face);
    FT_Done_FreeType(f->lib);
    free(f);
}

/* -------------------------------------------------------------- UTF-8 */

/* The code point at *s (advancing *s); U+FFFD for a malformed sequence,
 * which consumes one byte. */
static uint32_t next_cp(const unsigned char **s)
{
    const unsigned char *p = *s;
    uint32_t c = p[0];
    int n = c < 0x80 ? 0 : c >= 0xC2 && c < 0xE0 ? 1 : c >= 0xE0 && c < 0xF0 ? 2 : c >= 0xF0 && c < 0xF5 ? 3 : -1;
    if (n < 0) {
        *s = p + 1;
        return 0xFFFD;
    }
    c &= n == 0 ? 0x7F : n == 1 ? 0x1F : n == 2 ? 0x0F : 0x07;
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *s = p + 1;
            return 0xFFFD;
        }
        c = c << 6 | (p[i] & 0x3F);
    }
    static const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (c < min[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        *s = p + 1;
        return 0xFFFD;
    }
    *s = p + 1 + n;
    return c;
}

/* ------------------------------------------------------ laying out text */

/* Called for each glyph, loaded (not rendered) into the face's slot, with
 * the pen position of its origin. */
typedef int (*glyph_fn)(void *ctx, FT_GlyphSlot slot, double pen_x, tl_error *err);

static int run_text(tl_font *f, double size_px, const char *utf8, glyph_fn fn, void *ctx, double *advance,
                    tl_error *err)
{
    FT_Face face = f->face;
    if (!(size_px > 0 && size_px < 10000) ||
        FT_Set_Char_Size(face, 0, (FT_F26Dot6)lround(size_px * 64), 72, 72) != 0) {
        tl_error_set(err, "font: cannot use size %g px", size_px);
        return -1;
    }
    const unsigned char *s = (const unsigned char *)utf8;
    double pen = 0;
    FT_UInt prev = 0;
    while (*s) {
        FT_UInt gi = FT_Get_Char_Index(face, next_cp(&s));
        if (prev && gi && FT_HAS_KERNING(face)) {
            FT_Vector k;
            if (FT_Get_Kerning(face, prev, gi, FT_KERNING_UNFITTED, &k) == 0) pen += k.x / 64.0;
        }
        if (FT_Load_Glyph(face, gi, FT_LOAD_NO_BITMAP | FT_LOAD_TARGET_LIGHT) != 0) {
            tl_error_set(err, "font: %s: cannot load glyph %u", f->path, gi);
            return -1;
        }
        if (fn && fn(ctx, face->glyph, pen, err) != 0) return -1;
        pen += face->glyph->linearHoriAdvance / 65536.0;
        prev = gi;
    }
    *advance = pen;
    return 0;
}

static int measure_glyph(void *ctx, FT_GlyphSlot slot, double pen_x, tl_error *err)
{
    (void)err;
    tl_text_box *b = ctx;
    const FT_Glyph_Metrics *m = &slot->metrics;
    if (m->width == 0 || m->height == 0) return 0; /* a space */
    double x0 = pen_x + m->horiBearingX / 64.0, x1 = x0 + m->width / 64.0;
    double top = m->horiBearingY / 64.0, bottom = (m->height - m->horiBearingY) / 64.0;
    b->x0 = fmin(b->x0, x0);
    b->x1 = fmax(b->x1, x1);
    b->ascent = fmax(b->ascent, top);
    b->descent = fmax(b->descent, bottom);
    return 0;
}

int tl_text_measure(tl_font *f, double size_px, const char *utf8, tl_text_box *box, tl_error *err)
{
    *box = (tl_text_box){.x0 = HUGE_VAL, .x1 = -HUGE_VAL, .ascent = -HUGE_VAL, .descent = -HUGE_VAL};
    if (run_text(f, size_px, utf8, measure_glyph, box, &box->advance, err) != 0) return -1;
    if (box->x0 > box->x1) *box = (tl_text_box){.advance = box->advance}; /* no ink */
    return 0;
}

typedef struct draw_ctx {
    tl_canvas *c;
    double x;
    int baseline;
    tl_rgb col;
} draw_ctx;

static int draw_glyph(void *ctx, FT_GlyphSlot slot, double pen_x, tl_error *err)
{
    draw_ctx *d = ctx;
    double at = d->x + pen_x, whole = floor(at);
    if (slot->format == FT_GLYPH_FORMAT_OUTLINE)
        FT_Outline_Translate(&slot->outline, (FT_Pos)lround((at - whole) * 64), 0);
    if (FT_Render_Glyph(slot, FT_RENDER_MODE_NORMAL) != 0) {
        tl_error_set(err, "font: cannot render a glyph");
        return -1;
    }
    const FT_Bitmap *bm = &slot->bitmap;
    if (bm->pixel_mode != FT_PIXEL_MODE_GRAY || !bm->buffer) return 0;
    tl_canvas_blend_mask(d->c, (int)whole + slot->bitmap_left, d->baseline - slot->bitmap_top, bm->buffer,
                         (int)bm->width, (int)bm->rows, bm->pitch, d->col);
    return 0;
}

int tl_text_draw(tl_canvas *c, tl_font *f, double size_px, double x, double baseline, const char *utf8,
                 tl_rgb col, tl_error *err)
{
    if (!(fabs(x) < 1e6 && fabs(baseline) < 1e6)) {
        tl_error_set(err, "text: position (%g, %g) is off any canvas", x, baseline);
        return -1;
    }
    draw_ctx d = {c, x, (int)lround(baseline), col};
    double advance;
    return run_text(f, size_px, utf8, draw_glyph, &d, &advance, err);
}
