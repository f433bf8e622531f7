/* test_render.c — src/render: base64 (RFC 4648 §10 vectors), colours, the
 * canvas's coverage and blending, PNG files read back with libpng (and no
 * file left behind on failure), matplotlib's automatic ticks, fonts, and
 * the stacked-bar chart of the bert golden run (analysis-layer spec §13.1:
 * size near the reference's 1768x359, segment colours where the times put
 * them), and the comparative chart's two bars. Expected values are computed by hand in the comments. */
#include <dirent.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/base64.h"
#include "render/canvas.h"
#include "render/png_chart.h"
#include "render/text.h"
#include "test.h"

tl_test_ctx tl_test_state;

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t cap, const char *name) { snprintf(buf, cap, "%s/%s", tmpdir, name); }

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* Entries of tmpdir whose name contains ".tmp-" (left-over temp files). */
static int temp_leftovers(void)
{
    DIR *d = opendir(tmpdir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strstr(e->d_name, ".tmp-")) n++;
    if (d) closedir(d);
    return n;
}

/* |channel difference| <= tol for each channel */
static int rgb_near(tl_rgb a, tl_rgb b, int tol)
{
    return abs(a.r - b.r) <= tol && abs(a.g - b.g) <= tol && abs(a.b - b.b) <= tol;
}

/* ------------------------------------------------------------ base64 */

static void test_base64(void)
{
    static const char *const vec[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                         {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                         {"foobar", "Zm9vYmFy"}};
    char out[64];
    for (size_t i = 0; i < sizeof vec / sizeof *vec; i++) {
        size_t n = tl_base64_encode(vec[i][0], strlen(vec[i][0]), out);
        CHECK_STR(out, vec[i][1]);
        CHECK_I64(n, strlen(vec[i][1]));
        CHECK_I64(tl_base64_len(strlen(vec[i][0])), strlen(vec[i][1]));
    }
    /* 0xfb 0xff = 111110 111111 1111(00): '+', '/', '8', '=' */
    static const unsigned char hi[] = {0xfb, 0xff};
    tl_base64_encode(hi, 2, out);
    CHECK_STR(out, "+/8=");
    /* 0x00 0x10 0x83 = 000000 000001 000010 000011 */
    static const unsigned char lo[] = {0x00, 0x10, 0x83};
    tl_base64_encode(lo, 3, out);
    CHECK_STR(out, "ABCD");
}

/* ------------------------------------------------------------ canvas */

static void test_rgb_parse(void)
{
    tl_rgb c;
    CHECK(tl_rgb_parse("#e74c3c", &c) == 0 && c.r == 231 && c.g == 76 && c.b == 60);
    CHECK(tl_rgb_parse("#AAB7C4", &c) == 0 && c.r == 170 && c.g == 183 && c.b == 196);
    CHECK(tl_rgb_parse("e74c3c", &c) != 0);
    CHECK(tl_rgb_parse("#e74c3", &c) != 0);
    CHECK(tl_rgb_parse("#e74c3c0", &c) != 0);
    CHECK(tl_rgb_parse("#e74c3g", &c) != 0);
    CHECK(tl_rgb_parse(NULL, &c) != 0);
}

static void test_canvas_draw(void)
{
    tl_canvas c;
    tl_error err;
    tl_rgb white = {255, 255, 255}, red = {231, 76, 60}, black = {0, 0, 0};
    CHECK(tl_canvas_init(&c, 0, 5, white, &err) != 0);
    CHECK(tl_canvas_init(&c, 5, TL_CANVAS_MAX_SIDE + 1, white, &err) != 0);
    CHECK(tl_canvas_init(&c, 20, 10, white, &err) == 0);

    tl_canvas_fill_rect(&c, 2, 2, 5, 4, red, 1); /* whole pixels 2..4 x 2..3 */
    CHECK(rgb_near(tl_canvas_get(&c, 2, 2), red, 0));
    CHECK(rgb_near(tl_canvas_get(&c, 4, 3), red, 0));
    CHECK(rgb_near(tl_canvas_get(&c, 5, 3), white, 0));
    CHECK(rgb_near(tl_canvas_get(&c, 4, 4), white, 0));
    /* alpha 0.95 over white: 231*.95+255*.05 = 232.2, 84.95, 69.75 */
    tl_canvas_fill_rect(&c, 10, 0, 12, 2, red, 0.95);
    CHECK(rgb_near(tl_canvas_get(&c, 11, 1), (tl_rgb){232, 85, 70}, 0));
    /* a quarter of pixel (15, 5) covered in black: 255 * .75 = 191.25 */
    tl_canvas_fill_rect(&c, 14.5, 4.5, 15.5, 5.5, black, 1);
    CHECK(rgb_near(tl_canvas_get(&c, 15, 5), (tl_rgb){191, 191, 191}, 0));
    CHECK(rgb_near(tl_canvas_get(&c, 14, 4), (tl_rgb){191, 191, 191}, 0));
    /* a 1 px horizontal line on a pixel boundary covers two rows half */
    tl_canvas_line(&c, 0, 8, 4, 8, 1, black, 1);
    CHECK(rgb_near(tl_canvas_get(&c, 1, 7), (tl_rgb){128, 128, 128}, 1));
    CHECK(rgb_near(tl_canvas_get(&c, 1, 8), (tl_rgb){128, 128, 128}, 1));
    /* a diagonal line darkens the pixels it crosses, not the corners away */
    tl_canvas_line(&c, 16, 0, 20, 4, 1.5, black, 1);
    CHECK(tl_canvas_get(&c, 17, 1).r < 100);
    CHECK(tl_canvas_get(&c, 19, 0).r == 255);
    /* clipping: shapes off the canvas change nothing and do not crash */
    tl_canvas_fill_rect(&c, -100, -100, -50, 300, black, 1);
    tl_canvas_line(&c, -10, -10, -1, -3, 2, black, 1);
    tl_canvas_fill_rect(&c, NAN, 0, 3, 3, black, 1);
    CHECK(rgb_near(tl_canvas_get(&c, 0, 0), white, 0));
    tl_canvas_free(&c);
}

/* Reads a PNG back with libpng's simplified API as 8-bit RGB. */
static unsigned char *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) return NULL;
    img.format = PNG_FORMAT_RGB;
    unsigned char *buf = malloc(PNG_IMAGE_SIZE(img));
    if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        free(buf);
        png_image_free(&img);
        return NULL;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return buf;
}

static void test_png_roundtrip(void)
{
    tl_canvas c;
    tl_error err;
    CHECK(tl_canvas_init(&c, 7, 3, (tl_rgb){255, 255, 255}, &err) == 0);
    tl_canvas_fill_rect(&c, 0, 0, 1, 1, (tl_rgb){1, 2, 3}, 1);
    tl_canvas_fill_rect(&c, 6, 2, 7, 3, (tl_rgb){250, 128, 0}, 1);
    char path[512];
    path_in_tmp(path, sizeof path, "sub/dir/small.png"); /* parents are created */
    CHECK(tl_canvas_write_png(&c, path, 150, &err) == 0);
    int w = 0, h = 0;
    unsigned char *px = read_png(path, &w, &h);
    CHECK(px != NULL);
    if (px) {
        CHECK_I64(w, 7);
        CHECK_I64(h, 3);
        CHECK(memcmp(px, c.px, 7 * 3 * 3) == 0);
        CHECK(px[0] == 1 && px[1] == 2 && px[2] == 3);
        free(px);
    }
    /* header: signature, then IHDR width 7 height 3 depth 8 colour type 2 */
    FILE *f = fopen(path, "rb");
    unsigned char hdr[26] = {0};
    CHECK(f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr);
    if (f) fclose(f);
    CHECK(memcmp(hdr, "\x89PNG\r\n\x1a\n", 8) == 0);
    CHECK(memcmp(hdr + 12, "IHDR", 4) == 0);
    CHECK(hdr[19] == 7 && hdr[23] == 3 && hdr[24] == 8 && hdr[25] == 2);

    /* failures leave no file: the destination is a directory (rename
     * fails), or its parent is a regular file (cannot create it) */
    char dir[512], bad[600];
    path_in_tmp(dir, sizeof dir, "a_directory.png");
    CHECK(mkdir(dir, 0777) == 0);
    CHECK(tl_canvas_write_png(&c, dir, 150, &err) != 0);
    CHECK(strstr(err.msg, "a_directory.png") != NULL);
    snprintf(bad, sizeof bad, "%s/x.png", path);
    CHECK(tl_canvas_write_png(&c, bad, 150, &err) != 0);
    CHECK(!file_exists(bad));
    CHECK_I64(temp_leftovers(), 0);
    tl_canvas_free(&c);
}

/* ------------------------------------------------------------- ticks */

static void check_ticks(double vmax, int nbins, int n, double first, double step, int visible, const char *labels,
                        int order)
{
    tl_chart_ticks t;
    CHECK(tl_chart_ticks_compute(0, vmax, nbins, &t) == 0);
    CHECK_I64(t.n, n);
    CHECK_I64(t.order, order);
    int vis = 0;
    char joined[512] = "";
    for (int i = 0; i < t.n; i++) {
        CHECK(fabs(t.value[i] - (first + i * step)) < 1e-9 * fabs(step));
        vis += t.visible[i];
        if (i) strcat(joined, " ");
        strcat(joined, t.label[i]);
    }
    CHECK_I64(vis, visible);
    CHECK_STR(joined, labels);
}

static void test_ticks(void)
{
    /* bert: [0, 3.496], 9 bins: scale 0.1, raw step 0.388 -> 0.5; ticks to
     * 3.5 (beyond the view, not drawn); labels %1.1f */
    check_ticks(3.49597607421875, 9, 8, 0, 0.5, 7, "0.0 0.5 1.0 1.5 2.0 2.5 3.0 3.5", 0);
    /* [0, 1]: raw 0.111 -> 0.2; 0.6000000000000001 still prints 0.6 */
    check_ticks(1, 9, 6, 0, 0.2, 6, "0.0 0.2 0.4 0.6 0.8 1.0", 0);
    /* [0, 350]: scale 10, raw 38.9 -> 50; integers print without decimals */
    check_ticks(350, 9, 8, 0, 50, 8, "0 50 100 150 200 250 300 350", 0);
    /* [0, 12]: raw 1.33 -> 2 */
    check_ticks(12, 9, 7, 0, 2, 7, "0 2 4 6 8 10 12", 0);
    /* [0, 3.496] with 4 bins: raw 0.874 -> 1 */
    check_ticks(3.49597607421875, 4, 5, 0, 1, 4, "0 1 2 3 4", 0);
    /* [0, 2.5e6]: raw 277778 -> 5e5; visible max 2.5e6 has order 6: the
     * labels leave out 1e6 */
    check_ticks(2.5e6, 9, 6, 0, 5e5, 6, "0.0 0.5 1.0 1.5 2.0 2.5", 6);
    /* [0, 0.00007]: order -5, ticks 1e-5 apart print as 0..7 */
    check_ticks(0.00007, 9, 8, 0, 1e-5, 8, "0 1 2 3 4 5 6 7", -5);
    /* [0, 0.0375]: raw 0.00417 -> 0.005, up to 0.040 (not drawn), %1.3f */
    check_ticks(0.0375, 9, 9, 0, 0.005, 8, "0.000 0.005 0.010 0.015 0.020 0.025 0.030 0.035 0.040", 0);
    tl_chart_ticks t;
    CHECK(tl_chart_ticks_compute(1, 1, 9, &t) != 0);
    CHECK(tl_chart_ticks_compute(0, NAN, 9, &t) != 0);
    CHECK(tl_chart_ticks_compute(0, INFINITY, 9, &t) != 0);
    /* negative ticks get a U+2212 minus: [-1, 1] -> -1.0 ... 1.0 */
    CHECK(tl_chart_ticks_compute(-1, 1, 9, &t) == 0);
    CHECK_STR(t.label[0], "\xe2\x88\x92" "1.00");
}

/* ------------------------------------------------------------- fonts */

static void test_fonts(void)
{
    char path[1024];
    tl_error err;
    unsetenv("TRACELENS_FONT");
    unsetenv("TRACELENS_FONT_BOLD");
    if (tl_font_find(TL_FONT_REGULAR, path, sizeof path, &err) != 0) {
        printf("fonts: %s (font tests skipped)\n", err.msg);
        return;
    }
    CHECK(strstr(path, "DejaVuSans.ttf") != NULL);
    CHECK(tl_font_find(TL_FONT_BOLD, path, sizeof path, &err) == 0);
    tl_font *f = tl_font_open(path, &err);
    CHECK(f != NULL);
    if (f) {
        tl_text_box a, b, dash;
        /* widths add up; the em dash (U+2014) has ink; bad UTF-8 draws U+FFFD */
        CHECK(tl_text_measure(f, 20, "ab", &a, &err) == 0);
        CHECK(tl_text_measure(f, 40, "ab", &b, &err) == 0);
        CHECK(fabs(b.advance - 2 * a.advance) < 0.5);
        CHECK(a.ascent > 10 && a.ascent < 20 && a.descent < 2);
        CHECK(tl_text_measure(f, 20, "\xe2\x80\x94", &dash, &err) == 0);
        CHECK(dash.x1 - dash.x0 > 10);
        CHECK(tl_text_measure(f, 20, "\xff\xfe\xe2\x80", &b, &err) == 0);
        CHECK(b.advance > 0);
        CHECK(tl_text_measure(f, 0, "x", &b, &err) != 0);
        tl_canvas c;
        CHECK(tl_canvas_init(&c, 40, 30, (tl_rgb){255, 255, 255}, &err) == 0);
        CHECK(tl_text_draw(&c, f, 20, 2, 22, "H\xff", (tl_rgb){0, 0, 0}, &err) == 0);
        int dark = 0;
        for (int y = 0; y < 30; y++)
            for (int x = 0; x < 40; x++) dark += tl_canvas_get(&c, x, y).r < 128;
        CHECK(dark > 20);
        CHECK(tl_canvas_get(&c, 39, 29).r == 255); /* below the baseline, right */
        tl_canvas_free(&c);
        tl_font_close(f);
    }
    /* TRACELENS_FONT names the font; a bad one is an error, not a crash */
    char bogus[512];
    path_in_tmp(bogus, sizeof bogus, "not-a-font.ttf");
    FILE *bf = fopen(bogus, "w");
    if (bf) {
        fputs("not a font\n", bf);
        fclose(bf);
    }
    setenv("TRACELENS_FONT", bogus, 1);
    CHECK(tl_font_find(TL_FONT_REGULAR, path, sizeof path, &err) == 0);
    CHECK_STR(path, bogus);
    CHECK(tl_font_open(path, &err) == NULL);
    CHECK(strstr(err.msg, "not a scalable font") != NULL);
    setenv("TRACELENS_FONT", "/nonexistent/font.ttf", 1);
    CHECK(tl_font_find(TL_FONT_REGULAR, path, sizeof path, &err) != 0);
    CHECK(strstr(err.msg, "TRACELENS_FONT=/nonexistent/font.ttf") != NULL);
    unsetenv("TRACELENS_FONT");
}

/* ------------------------------------------------------------- chart */

/* The bert golden run (category_manifest.json): compute categories by
 * descending gpu_kernel_time_ms, then the rest of total_time_ms. */
#define BERT_TOTAL 3.49597607421875
static const double bert_ms[] = {0.174, 0.114, 0.048, 0.04, 0.011, 0.004};
static const char *const palette[] = {"#e74c3c", "#e67e22", "#f1c40f", "#2ecc71", "#9b59b6", "#1abc9c"};

static void bert_spec(tl_stacked_bar *sp, tl_chart_segment seg[7])
{
    double sum = 0;
    for (int i = 0; i < 6; i++) {
        seg[i].value = bert_ms[i];
        seg[i].label = "Label \xe2\x80\x94 0.0 ms (0.0%)";
        tl_rgb_parse(palette[i], &seg[i].color);
        sum += bert_ms[i];
    }
    seg[6].value = BERT_TOTAL - sum;
    seg[6].label = "Non-computing \xe2\x80\x94 3.1 ms (88.8%)";
    tl_rgb_parse("#aab7c4", &seg[6].color);
    *sp = (tl_stacked_bar){.title = "BERT on MI300X \xe2\x80\x94 Performance Breakdown",
                           .xlabel = "GPU time (ms)",
                           .xmax = BERT_TOTAL,
                           .segments = seg,
                           .nsegments = 7,
                           .legend_cols = 4,
                           .width_in = 12,
                           .height_in = 3,
                           .dpi = 150};
}

/* a colour drawn with alpha 0.95 over white */
static tl_rgb over_white(tl_rgb c)
{
    return (tl_rgb){(unsigned char)lround(c.r * 0.95 + 12.75), (unsigned char)lround(c.g * 0.95 + 12.75),
                    (unsigned char)lround(c.b * 0.95 + 12.75)};
}

static void test_chart(void)
{
    char font[1024];
    tl_error err;
    if (tl_font_find(TL_FONT_REGULAR, font, sizeof font, &err) != 0) {
        printf("chart: %s (chart tests skipped)\n", err.msg);
        return;
    }
    tl_chart_segment seg[7];
    tl_stacked_bar sp;
    bert_spec(&sp, seg);
    char path[512];
    path_in_tmp(path, sizeof path, "perf_improvement.png");
    tl_chart_geometry geo;
    CHECK(tl_chart_stacked_bar_png(&sp, path, &geo, &err) == 0);
    int w = 0, h = 0;
    unsigned char *px = read_png(path, &w, &h);
    CHECK(px != NULL);
    if (!px) return;
    CHECK_I64(w, geo.width);
    CHECK_I64(h, geo.height);
    /* within 5% of the reference's 1768 x 359 */
    CHECK(abs(w - 1768) <= 0.05 * 1768);
    CHECK(abs(h - 359) <= 0.05 * 359);
    printf("chart: bert plot %dx%d (reference 1768x359)\n", w, h);

#define AT(x, y) ((tl_rgb){px[((size_t)(y) * w + (x)) * 3], px[((size_t)(y) * w + (x)) * 3 + 1], px[((size_t)(y) * w + (x)) * 3 + 2]})
    /* the bar's row: its coloured run starts and ends where 0 and xmax are */
    int row = (int)((geo.bar_y0 + geo.bar_y1) / 2), left = -1, right = -1;
    CHECK(row > 0 && row < h);
    for (int x = 0; x < w; x++) {
        tl_rgb p = AT(x, row);
        if (p.r < 250 || p.g < 250 || p.b < 250) {
            if (left < 0) left = x;
            right = x;
        }
    }
    CHECK(fabs(left - geo.axis_x0) <= 1.5);
    CHECK(fabs(right + 1 - geo.axis_x1) <= 1.5);
    /* the bar is 0.8 of the 1.2 y range: about two thirds of the axes height */
    CHECK(geo.bar_y1 - geo.bar_y0 > 60);
    /* each segment's colour in the middle of its share of the run (those
     * wider than 4 px: the white edges, 1.9 px, cover narrower ones) */
    double cum = 0, width = right + 1 - left;
    for (int i = 0; i < 7; i++) {
        int x = (int)(left + (cum + seg[i].value / 2) / BERT_TOTAL * width);
        cum += seg[i].value;
        if (seg[i].value / BERT_TOTAL * width <= 4) continue;
        tl_rgb want = over_white(seg[i].color);
        CHECK(rgb_near(AT(x, row), want, 2));
        if (!rgb_near(AT(x, row), want, 2))
            fprintf(stderr, "segment %d at x=%d: %d,%d,%d\n", i, x, AT(x, row).r, AT(x, row).g, AT(x, row).b);
    }
    /* the first segment is #e74c3c at the left of the bar */
    CHECK(rgb_near(AT(left + 5, row), (tl_rgb){232, 85, 70}, 2));
    /* a white edge between segments: at the gemm/sdpa boundary */
    int edge = (int)lround(left + 0.174 / BERT_TOTAL * width);
    int whiteish = 0;
    for (int x = edge - 2; x <= edge + 1; x++) whiteish |= AT(x, row).g > 200 && AT(x, row).r > 200;
    CHECK(whiteish);
    /* title above the bar (dark text), legend swatches below the axis */
    int title_ink = 0, swatches[7] = {0};
    for (int y = 0; y < (int)geo.bar_y0; y++)
        for (int x = 0; x < w; x++) title_ink += AT(x, y).r < 60;
    CHECK(title_ink > 500);
    for (int y = (int)geo.bar_y1 + 40; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int i = 0; i < 7; i++) swatches[i] += rgb_near(AT(x, y), over_white(seg[i].color), 2);
    for (int i = 0; i < 7; i++) CHECK(swatches[i] > 200); /* 37.5 x 13 px each */
#undef AT
    free(px);

    /* bad descriptions are errors and write nothing */
    char bad[512];
    path_in_tmp(bad, sizeof bad, "bad.png");
    sp.xmax = 0;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    CHECK(strstr(err.msg, "xmax") != NULL);
    sp.xmax = BERT_TOTAL;
    seg[2].value = -1;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    CHECK(strstr(err.msg, "segment 3") != NULL);
    seg[2].value = NAN;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    seg[2].value = 0.048;
    sp.nsegments = 0;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    sp.nsegments = 7;
    sp.dpi = 5000;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    sp.dpi = 150;
    setenv("TRACELENS_FONT", "/nonexistent/font.ttf", 1);
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    CHECK(strstr(err.msg, "TRACELENS_FONT") != NULL);
    unsetenv("TRACELENS_FONT");
    CHECK(!file_exists(bad));

    /* one segment, no title or label, small figure: still a picture */
    tl_chart_segment one = {"only", 2, {52, 152, 219}};
    tl_stacked_bar small = {.xmax = 4, .segments = &one, .nsegments = 1, .width_in = 4, .height_in = 2, .dpi = 72};
    tl_canvas c;
    CHECK(tl_chart_stacked_bar_render(&small, &c, &geo, &err) == 0);
    CHECK(c.w > 100 && c.w < 4 * 72 + 40 && c.h > 50);
    /* half the axis is blue (alpha .95: 52 -> 62, 152 -> 157, 219 -> 221) */
    CHECK(rgb_near(tl_canvas_get(&c, (int)(geo.axis_x0 + (geo.axis_x1 - geo.axis_x0) / 4),
                                 (int)((geo.bar_y0 + geo.bar_y1) / 2)),
                   (tl_rgb){62, 157, 221}, 2));
    CHECK(rgb_near(tl_canvas_get(&c, (int)(geo.axis_x0 + (geo.axis_x1 - geo.axis_x0) * 0.75),
                                 (int)((geo.bar_y0 + geo.bar_y1) / 2)),
                   (tl_rgb){255, 255, 255}, 0));
    tl_canvas_free(&c);
}

/* Several bars (a comparative analysis): two bars on one axis, trace 1 on
 * top, each named left of the axis, one colour per category in both, one
 * legend entry per colour. Trace 1: red 3, orange 1, grey 4 (of xmax 10);
 * trace 2: orange 2, red 5, blue 1, grey 2. */
static const tl_rgb white_px = {255, 255, 255};

static int ink_in(const tl_canvas *c, int x0, int x1, int y0, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) n += tl_canvas_get(c, x, y).r < 100;
    return n;
}

static int count_near(const tl_canvas *c, int y0, tl_rgb want)
{
    int n = 0;
    for (int y = y0; y < c->h; y++)
        for (int x = 0; x < c->w; x++) n += rgb_near(tl_canvas_get(c, x, y), want, 2);
    return n;
}

static void test_chart_bars(void)
{
    char font[1024];
    tl_error err;
    if (tl_font_find(TL_FONT_REGULAR, font, sizeof font, &err) != 0) {
        printf("chart bars: %s (skipped)\n", err.msg);
        return;
    }
    tl_rgb red, orange, grey, blue;
    tl_rgb_parse("#e74c3c", &red);
    tl_rgb_parse("#e67e22", &orange);
    tl_rgb_parse("#aab7c4", &grey);
    tl_rgb_parse("#3498db", &blue);
    tl_chart_segment s1[] = {{"GEMM", 3, red}, {"SDPA_fwd", 1, orange}, {"Non-computing", 4, grey}};
    tl_chart_segment s2[] = {{"SDPA_fwd", 2, orange}, {"GEMM", 5, red}, {"MoE", 1, blue}, {"Non-computing", 2, grey}};
    tl_chart_bar bars[] = {{"Trace 1 - (H100)", s1, 3}, {"Trace 2 - (MI300X)", s2, 4}};
    tl_stacked_bar sp = {.title = "Two traces", .xlabel = "GPU time (ms)", .xmax = 10, .bars = bars, .nbars = 2,
                         .width_in = 12, .height_in = 4, .dpi = 150};
    tl_canvas c;
    tl_chart_geometry geo;
    CHECK(tl_chart_stacked_bar_render(&sp, &c, &geo, &err) == 0);
    if (!c.px) return;
    CHECK_I64(geo.nbars, 2);
    /* equal bars, the first above the second, apart */
    CHECK(geo.bars_y0[0] < geo.bars_y1[0] && geo.bars_y1[0] + 10 < geo.bars_y0[1] && geo.bars_y0[1] < geo.bars_y1[1]);
    CHECK(fabs((geo.bars_y1[0] - geo.bars_y0[0]) - (geo.bars_y1[1] - geo.bars_y0[1])) < 1e-9);
    CHECK(geo.bars_y1[0] - geo.bars_y0[0] > 60);
    CHECK(geo.bar_y0 == geo.bars_y0[0] && geo.bar_y1 == geo.bars_y1[0]);
    double ax = geo.axis_x0, aw = geo.axis_x1 - geo.axis_x0;
#define PX(v, row) tl_canvas_get(&c, (int)(ax + (v) / 10.0 * aw), (row))
    int r1 = (int)((geo.bars_y0[0] + geo.bars_y1[0]) / 2), r2 = (int)((geo.bars_y0[1] + geo.bars_y1[1]) / 2);
    /* trace 1's segments where its times put them, then white */
    CHECK(rgb_near(PX(1.5, r1), over_white(red), 2));
    CHECK(rgb_near(PX(3.5, r1), over_white(orange), 2));
    CHECK(rgb_near(PX(6, r1), over_white(grey), 2));
    CHECK(rgb_near(PX(9, r1), white_px, 0));
    /* trace 2's, in its own order, the same colour for the same category */
    CHECK(rgb_near(PX(1, r2), over_white(orange), 2));
    CHECK(rgb_near(PX(4.5, r2), over_white(red), 2));
    CHECK(rgb_near(PX(7.5, r2), over_white(blue), 2));
    CHECK(rgb_near(PX(9, r2), over_white(grey), 2));
    /* white between the bars */
    CHECK(rgb_near(PX(5, (int)((geo.bars_y1[0] + geo.bars_y0[1]) / 2)), white_px, 0));
#undef PX
    /* each bar's name, left of the axis at its height; nothing there between */
    int a0 = (int)geo.axis_x0;
    CHECK(ink_in(&c, 0, a0, (int)geo.bars_y0[0], (int)geo.bars_y1[0]) > 100);
    CHECK(ink_in(&c, 0, a0, (int)geo.bars_y0[1], (int)geo.bars_y1[1]) > 100);
    CHECK(ink_in(&c, 0, a0, (int)geo.bars_y1[0] + 2, (int)geo.bars_y0[1] - 2) == 0);
    /* the legend once: one swatch per colour below the axis (37.5 x 13 px,
     * about 400 px inside its white edge) */
    int below = (int)geo.bars_y1[1] + 40;
    tl_rgb cols[] = {red, orange, grey, blue};
    for (int i = 0; i < 4; i++) {
        int n = count_near(&c, below, over_white(cols[i]));
        CHECK(n > 250 && n < 700);
        if (!(n > 250 && n < 700)) fprintf(stderr, "legend colour %d: %d px\n", i, n);
    }
    tl_canvas_free(&c);

    /* a legend given: only its entries */
    tl_chart_segment leg[] = {{"GEMM", 0, red}, {"rest", 0, grey}};
    sp.legend = leg;
    sp.nlegend = 2;
    CHECK(tl_chart_stacked_bar_render(&sp, &c, &geo, &err) == 0);
    if (c.px) {
        below = (int)geo.bars_y1[1] + 40;
        CHECK(count_near(&c, below, over_white(red)) > 250);
        CHECK(count_near(&c, below, over_white(blue)) == 0);
        tl_canvas_free(&c);
    }
    sp.legend = NULL;
    sp.nlegend = 0;

    /* one bar given as bars, without a name, is the segments' chart */
    tl_stacked_bar a = {.xmax = 10, .segments = s2, .nsegments = 4, .width_in = 6, .height_in = 2, .dpi = 72};
    tl_chart_bar only = {NULL, s2, 4};
    tl_stacked_bar b = {.xmax = 10, .bars = &only, .nbars = 1, .width_in = 6, .height_in = 2, .dpi = 72};
    tl_canvas ca, cb;
    CHECK(tl_chart_stacked_bar_render(&a, &ca, NULL, &err) == 0);
    CHECK(tl_chart_stacked_bar_render(&b, &cb, NULL, &err) == 0);
    CHECK(ca.px && cb.px && ca.w == cb.w && ca.h == cb.h &&
          memcmp(ca.px, cb.px, (size_t)ca.w * (size_t)ca.h * 3) == 0);
    tl_canvas_free(&ca);
    tl_canvas_free(&cb);

    /* bad descriptions */
    char bad[512];
    path_in_tmp(bad, sizeof bad, "bars.png");
    s2[2].value = -1;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    CHECK(strstr(err.msg, "bar 2: segment 3") != NULL);
    s2[2].value = 1;
    sp.segments = s1;
    sp.nsegments = 3;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    CHECK(strstr(err.msg, "segments and bars") != NULL);
    sp.segments = NULL;
    sp.nsegments = 0;
    bars[1].nsegments = 0;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    CHECK(strstr(err.msg, "bar 2: no segments") != NULL);
    bars[1].nsegments = 4;
    sp.nbars = TL_CHART_MAX_BARS + 1;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0);
    sp.nbars = 2;
    sp.legend = leg;
    CHECK(tl_chart_stacked_bar_png(&sp, bad, NULL, &err) != 0); /* nlegend 0 */
    CHECK(!file_exists(bad));
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tl_render_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {{"base64", test_base64}, {"rgb", test_rgb_parse}, {"canvas", test_canvas_draw},
                 {"png", test_png_roundtrip}, {"ticks", test_ticks}, {"fonts", test_fonts},
                 {"chart", test_chart}, {"chart bars", test_chart_bars}};
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        int before = tl_test_state.failures;
        tests[i].fn();
        if (tl_test_state.failures == before) passed++;
        else {
            failed++;
            fprintf(stderr, "%s failed\n", tests[i].name);
        }
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
