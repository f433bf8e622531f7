/* text.h — anti-aliased text through FreeType, from UTF-8.
 * Owns tl_font: one FreeType library instance and one face, opened from a
 * font file and closed together (nothing global, so each thread may use its
 * own fonts). Glyphs are hinted vertically only and placed at fractional x
 * positions with the font's kerning; sizes are in pixels (em size).
 * Invalid UTF-8 bytes are drawn as U+FFFD; characters the font lacks get
 * its missing-glyph box. */
#ifndef TL_TEXT_H
#define TL_TEXT_H

#include <stddef.h>

#include "../util/error.h"
#include "canvas.h"

typedef struct tl_font tl_font;

typedef enum tl_font_style { TL_FONT_REGULAR, TL_FONT_BOLD } tl_font_style;

/* Finds a font file. Regular: $TRACELENS_FONT when set (it must then be a
 * readable file), else DejaVuSans.ttf in the usual system directories
 * (/usr/share/fonts/truetype/dejavu first). Bold: $TRACELENS_FONT_BOLD when
 * set, else DejaVuSans-Bold.ttf in those directories, else the regular
 * font. Writes the path into buf; -1 with a message naming what was
 * searched when nothing is found. */
int tl_font_find(tl_font_style style, char *buf, size_t cap, tl_error *err);
/* Opens a font file (NULL, err set, when FreeType cannot read it). */
tl_font *tl_font_open(const char *path, tl_error *err);
void tl_font_close(tl_font *f);

/* Extent of a line of text drawn with its origin (pen start, baseline) at
 * (0, 0): ink from x0 to x1, ascent above and descent below the baseline
 * (both >= 0 for text with ink), and the advance of the pen. */
typedef struct tl_text_box {
    double x0, x1, ascent, descent, advance;
} tl_text_box;

int tl_text_measure(tl_font *f, double size_px, const char *utf8, tl_text_box *box, tl_error *err);
/* Draws text with its origin at (x, baseline); the baseline is rounded to
 * a whole pixel row. */
int tl_text_draw(tl_canvas *c, tl_font *f, double size_px, double x, double baseline, const char *utf8,
                 tl_rgb col, tl_error *err);

#endif
