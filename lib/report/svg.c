/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A self-contained interactive flame graph: one SVG file with a small
 * script (click to zoom, Ctrl-F or the Search button to highlight), that
 * any browser opens. No Perl, no external files.
 *
 * One box per function: the lines of a Python function that a stack ran
 * at the same place are one box, labelled "qualname (file.py)", the file
 * by the shortest end of its path that tells it apart from the profile's
 * other files of that name ("flask/app.py", "srv/app.py":
 * report/path_suffix.h); its tooltip has the full path and each line's
 * share. Colours say what ran:
 * Python, native code, the kernel, or something unknown (a frame that
 * could not be named, a marker); the legend at the bottom says so. The
 * title says what was profiled, for how long and when.
 */
#include "report/svg.h"

#include "report/path_suffix.h"
#include "sys/text_escape.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WIDTH 1200
#define PAD 10
#define ROW 16
#define TOP 62
#define BOTTOM 48
#define MIN_PX 0.1
#define MAX_LINES_SHOWN 12 /* per-line shares in a tooltip */

/* What a box is, for its colour. */
enum box_kind { BOX_PYTHON, BOX_NATIVE, BOX_KERNEL, BOX_UNKNOWN, BOX_THREAD };

struct line_share {
	int line;
	uint64_t value;
};

struct fnode {
	char *key;   /* what makes two frames one box (kind, name, file) */
	char *label; /* what the box says */
	char *full;  /* the tooltip's first line */
	enum box_kind kind;
	uint64_t value;
	struct line_share *lines; /* Python: value per line */
	size_t nlines, cap_lines;
	struct fnode *kids;
	size_t nkids, cap;
};

static char *str_printf(const char *fmt, const char *a, const char *b)
{
	int n = snprintf(NULL, 0, fmt, a, b);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;

	if (s)
		snprintf(s, (size_t)n + 1, fmt, a, b);
	return s;
}

/* Key, label and tooltip name of a frame's box; files are named by their
 * short names in the profile (files). */
static int describe(const struct report_frame *f, const struct path_suffixes *files,
		    struct fnode *n)
{
	const char *name = report_frame_name(f);

	switch (f->kind) {
	case REPORT_FRAME_PYTHON:
		n->kind = f->file ? BOX_PYTHON : BOX_UNKNOWN;
		n->key = str_printf("p%s\n%s", name, f->file ? f->file : "");
		n->label = f->file ? str_printf("%s (%s)", name, path_suffix(files, f->file))
				   : strdup(name);
		n->full = f->file ? str_printf("%s (%s)", name, f->file) : strdup(name);
		break;
	case REPORT_FRAME_NATIVE:
		n->kind = f->name ? BOX_NATIVE : BOX_UNKNOWN;
		/* unnamed code: one box per file it is in */
		n->key = str_printf("n%s\n%s", f->name ? name : "", f->name ? "" : f->module ? f->module : "");
		n->label = f->name || !f->module ? strdup(name)
						 : str_printf("%s (%s)", name, path_suffix(files, f->module));
		n->full = f->module ? str_printf("%s (%s)", name, f->module) : strdup(name);
		break;
	case REPORT_FRAME_KERNEL:
		n->kind = f->name ? BOX_KERNEL : BOX_UNKNOWN;
		n->key = str_printf("k%s%s", name, "");
		n->label = strdup(name);
		n->full = str_printf("%s %s", name, "(kernel)");
		break;
	default:
		n->kind = BOX_UNKNOWN;
		n->key = str_printf("m%s%s", name, "");
		n->label = strdup(name);
		n->full = strdup(name);
	}
	return n->key && n->label && n->full ? 0 : -1;
}

static void free_node(struct fnode *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		free_node(&n->kids[i]);
	free(n->kids);
	free(n->lines);
	free(n->key);
	free(n->label);
	free(n->full);
}

/* The child of n with n's key, added if new (template: its key, label,
 * tooltip and kind, taken over). NULL when out of memory (template freed). */
static struct fnode *child(struct fnode *n, struct fnode *template)
{
	struct fnode *c;

	for (size_t i = 0; i < n->nkids; i++)
		if (strcmp(n->kids[i].key, template->key) == 0) {
			free_node(template);
			return &n->kids[i];
		}
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4;
		struct fnode *v = realloc(n->kids, cap * sizeof(*v));

		if (!v) {
			free_node(template);
			return NULL;
		}
		n->kids = v;
		n->cap = cap;
	}
	c = &n->kids[n->nkids++];
	*c = *template;
	return c;
}

static void add_line(struct fnode *n, int line, uint64_t value)
{
	for (size_t i = 0; i < n->nlines; i++)
		if (n->lines[i].line == line) {
			n->lines[i].value += value;
			return;
		}
	if (n->nlines == n->cap_lines) {
		size_t cap = n->cap_lines ? n->cap_lines * 2 : 4;
		struct line_share *v = realloc(n->lines, cap * sizeof(*v));

		if (!v)
			return;
		n->lines = v;
		n->cap_lines = cap;
	}
	n->lines[n->nlines++] = (struct line_share){ line, value };
}

static struct fnode *thread_node(struct fnode *root, const char *comm)
{
	struct fnode t = { .kind = BOX_THREAD };

	t.key = str_printf("t%s%s", comm, "");
	t.label = strdup(comm);
	t.full = str_printf("thread %s%s", comm, "");
	if (!t.key || !t.label || !t.full) {
		free_node(&t);
		return NULL;
	}
	return child(root, &t);
}

static void add_path(struct fnode *root, const struct report *rep,
		     const struct path_suffixes *files, const struct report_row *r)
{
	struct fnode *n = thread_node(root, r->comm);

	root->value += r->value;
	for (int i = 0; n && i < r->nframes; i++) {
		const struct report_frame *f = &rep->frames[r->frames[i]];
		struct fnode t = { 0 };

		n->value += r->value;
		if (describe(f, files, &t) < 0) {
			free_node(&t);
			return;
		}
		n = child(n, &t);
		if (n && f->kind == REPORT_FRAME_PYTHON && f->file)
			add_line(n, f->line, r->value);
	}
	if (n)
		n->value += r->value;
}

static int kid_cmp(const void *a, const void *b)
{
	const struct fnode *x = a, *y = b;
	int c = strcmp(x->label, y->label);

	return c ? c : strcmp(x->key, y->key);
}

static int line_cmp(const void *a, const void *b)
{
	const struct line_share *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int depth_of(struct fnode *n)
{
	int d = 0;

	if (n->nkids) /* leaves have no array: qsort wants one */
		qsort(n->kids, n->nkids, sizeof(*n->kids), kid_cmp);
	if (n->nlines)
		qsort(n->lines, n->nlines, sizeof(*n->lines), line_cmp);
	for (size_t i = 0; i < n->nkids; i++) {
		int k = depth_of(&n->kids[i]) + 1;

		if (k > d)
			d = k;
	}
	return d;
}

/*
 * Text for XML, from names of hostile processes and binaries: what a text
 * sink escapes (controls, C1, bad UTF-8: sys/text_escape.h) is written as
 * the same visible \xHH (XML 1.0 forbids most C0 characters even as
 * references), the two non-characters XML forbids as U+FFFD.
 */
static void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		size_t n = text_char_len(s);

		if (!n) {
			fprintf(out, "\\x%02x", (unsigned char)*s);
			continue;
		}
		if (n == 3 && memcmp(s, "\xef\xbf", 2) == 0 &&
		    ((unsigned char)s[2] == 0xbe || (unsigned char)s[2] == 0xbf)) {
			fputs("\xef\xbf\xbd", out); /* U+FFFE, U+FFFF */
			s += 2;
			continue;
		}
		if (n > 1) {
			fwrite(s, 1, n, out);
			s += n - 1;
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

/* The label that fits a box w pixels wide (about 7 px a character), cut
 * with ".." like the viewer script does; whole UTF-8 characters only. */
static void write_label(FILE *out, const char *name, double w)
{
	/* w is at most the image's width, unless counts summed past 2^64
	 * (hostile input): never convert an out-of-range double */
	size_t fit = w > 6 ? (size_t)(((w < 1e6 ? w : 1e6) - 6) / 7) : 0, chars = 0, i = 0;
	char buf[512];

	if (fit < 3)
		return;
	while (name[i] && chars < fit) {
		i++;
		while (((unsigned char)name[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	if (!name[i] || i + 3 > sizeof(buf)) {
		xml_escape(out, name);
		return;
	}
	/* cut two characters earlier to make room for ".." */
	size_t keep = 0, c = 0;

	while (c + 2 < fit && keep < i) {
		keep++;
		while (((unsigned char)name[keep] & 0xc0) == 0x80)
			keep++;
		c++;
	}
	memcpy(buf, name, keep);
	strcpy(buf + keep, "..");
	xml_escape(out, buf);
}

/* Each kind a hue (a shade per name, so neighbours differ); the legend
 * shows the middle shade. */
static void color_of(enum box_kind kind, unsigned v, char *buf, size_t len)
{
	v %= 55;
	switch (kind) {
	case BOX_PYTHON: /* green */
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + v, 190 + v / 2, 80 + v / 3);
		break;
	case BOX_NATIVE: /* red */
		snprintf(buf, len, "rgb(%u,%u,%u)", 225 + v / 2, 80 + v, 60 + v / 2);
		break;
	case BOX_KERNEL: /* orange */
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + v / 2, 150 + v, 30u);
		break;
	case BOX_THREAD: /* blue-grey */
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + v / 4, 185 + v / 4, 215 + v / 4);
		break;
	default: /* grey */
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + v / 3, 170 + v / 3, 170 + v / 3);
	}
}

static unsigned shade(const char *label)
{
	uint32_t h = 2166136261u;

	for (const char *p = label; *p && *p != '('; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return h % 55;
}

static void write_value(FILE *out, uint64_t value, const char *unit)
{
	/* "1 sample", "2 samples" */
	bool one = value == 1 && strcmp(unit, "samples") == 0;

	fprintf(out, "%llu %s", (unsigned long long)value, one ? "sample" : unit);
}

/* The tooltip: the full name, value and share, and each line's share. */
static void write_tooltip(FILE *out, const struct fnode *n, uint64_t total, const char *unit)
{
	xml_escape(out, n->full);
	fputs(" (", out);
	write_value(out, n->value, unit);
	fprintf(out, ", %.2f%%)", 100.0 * (double)n->value / (double)total);
	if (n->nlines > 1 || (n->nlines == 1 && n->lines[0].line >= 0)) {
		uint64_t sum = 0;

		for (size_t i = 0; i < n->nlines; i++)
			sum += n->lines[i].value;
		for (size_t i = 0; i < n->nlines && i < MAX_LINES_SHOWN; i++) {
			if (n->lines[i].line >= 0)
				fprintf(out, "\nline %d: ", n->lines[i].line);
			else
				fputs("\nline ?: ", out);
			write_value(out, n->lines[i].value, unit);
			fprintf(out, " (%.1f%% of the function here)",
				sum ? 100.0 * (double)n->lines[i].value / (double)sum : 0.0);
		}
		if (n->nlines > MAX_LINES_SHOWN)
			fprintf(out, "\n%zu more lines", n->nlines - MAX_LINES_SHOWN);
	}
}

static void draw(FILE *out, const struct fnode *n, double x, int depth, int max_depth,
		 double scale, uint64_t total, const char *unit)
{
	double w = (double)n->value * scale;
	int y = TOP + (max_depth - depth) * ROW;
	char color[48];

	if (w < MIN_PX)
		return;
	color_of(n->kind, shade(n->label), color, sizeof(color));
	fputs("<g class=\"f\" data-l=\"", out);
	xml_escape(out, n->label);
	fputs("\"><title>", out);
	write_tooltip(out, n, total, unit);
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
		     "rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		x, y, w, ROW - 1, color, x + 3, y + ROW - 4);
	write_label(out, n->label, w);
	fputs("</text></g>\n", out);
	for (size_t i = 0; i < n->nkids; i++) {
		draw(out, &n->kids[i], x, depth + 1, max_depth, scale, total, unit);
		x += (double)n->kids[i].value * scale;
	}
}

/* The viewer: zoom on click, search (names and full paths), labels that
 * fit. A box's label is in its data-l (the text shown may be cut). */
static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W=" "1200" ",P=10,frames=[],zoomed=null;\n"
	"function init(){var gs=document.querySelectorAll('g.f');for(var i=0;i<gs.length;i++){\n"
	" var g=gs[i],r=g.querySelector('rect');var t=g.querySelector('title').textContent;\n"
	" var f={g:g,r:r,t:g.querySelector('text'),x:+r.getAttribute('x'),w:+r.getAttribute('width'),\n"
	"  y:+r.getAttribute('y'),full:t.split('\\n')[0].replace(/ \\([^()]*%\\)$/,''),fill:r.getAttribute('fill')};\n"
	" f.name=g.getAttribute('data-l');\n"
	" frames.push(f);g.onclick=(function(f){return function(){zoom(f)}})(f);}\n"
	" document.getElementById('reset').onclick=function(){zoom(null)};\n"
	" document.getElementById('search').onclick=search;\n"
	" window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.key=='f'){e.preventDefault();search();}});\n"
	" zoom(null);}\n"
	"function label(f,x,w){var n=Math.floor((w-6)/7);f.t.setAttribute('x',x+3);\n"
	" f.t.textContent=n<3?'':(f.name.length<=n?f.name:f.name.slice(0,n-2)+'..');}\n"
	"function zoom(z){zoomed=z;var x0=z?z.x:P,w0=z?z.w:W-2*P,s=(W-2*P)/w0;\n"
	" document.getElementById('reset').style.opacity=z?1:0.3;\n"
	" frames.forEach(function(f){var inside=f.x>=x0-1e-6&&f.x+f.w<=x0+w0+1e-6;\n"
	"  var above=z&&f.y>z.y&&f.x<=x0+1e-6&&f.x+f.w>=x0+w0-1e-6;\n"
	"  if(!inside&&!above){f.g.style.display='none';return;}f.g.style.display='';\n"
	"  var x=above?P:P+(f.x-x0)*s,w=above?W-2*P:f.w*s;\n"
	"  f.r.setAttribute('x',x);f.r.setAttribute('width',w);f.r.style.opacity=above?0.5:1;label(f,x,w);});}\n"
	"function search(){var q=prompt('Search (regular expression; names and full paths)','');if(q===null)return;\n"
	" var re;try{re=new RegExp(q)}catch(e){alert(e);return}var hit=[],total=0,end=-1;\n"
	" frames.forEach(function(f){var m=q!==''&&re.test(f.full);f.r.setAttribute('fill',m?'rgb(230,0,230)':f.fill);if(m)hit.push(f)});\n"
	" hit.sort(function(a,b){return a.x-b.x});hit.forEach(function(f){if(f.x>=end){total+=f.w;end=f.x+f.w}});\n"
	" document.getElementById('matched').textContent=q===''?'':'Matched: '+(100*total/(W-2*P)).toFixed(1)+'%';}\n"
	"]]></script>\n";

/* "5 s", "1 min 30 s", "2 h 5 min" */
static void format_duration(uint64_t ns, char *buf, size_t len)
{
	uint64_t s = (ns + 500000000ull) / 1000000000ull;

	if (ns && ns < 1000000000ull)
		snprintf(buf, len, "%.1f s", (double)ns / 1e9);
	else if (s < 120)
		snprintf(buf, len, "%llu s", (unsigned long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%llu min %llu s", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else
		snprintf(buf, len, "%llu h %llu min", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60));
}

/* Second title line: how long, since when, at which rate, how much, which
 * Python. */
static void write_subtitle(FILE *out, const struct report *rep, uint64_t total, const char *unit)
{
	char when[64] = "", dur[32];
	time_t t = (time_t)(rep->start_realtime_ns / 1000000000ull);
	struct tm tm;

	if (rep->start_realtime_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm);
	format_duration(rep->duration_ns, dur, sizeof(dur));
	if (rep->duration_ns)
		fprintf(out, "%s, ", dur);
	if (when[0])
		fprintf(out, "from %s, ", when);
	if (rep->period_ns)
		fprintf(out, "sampled at %.0f Hz, ", 1e9 / (double)rep->period_ns);
	write_value(out, total, unit);
	if (rep->nprocs == 1 && rep->procs[0].python_version[0]) {
		fputs(", Python ", out);
		xml_escape(out, rep->procs[0].python_version);
	}
}

/* Swatches of the colours, with what they mean. */
static void write_legend(FILE *out, int y)
{
	static const struct {
		enum box_kind kind;
		const char *text;
	} items[] = {
		{ BOX_PYTHON, "Python" },   { BOX_NATIVE, "native (C)" },
		{ BOX_KERNEL, "kernel" },   { BOX_UNKNOWN, "unknown or marker" },
		{ BOX_THREAD, "thread" },
	};
	int x = PAD;

	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		char color[48];

		color_of(items[i].kind, 27, color, sizeof(color));
		fprintf(out,
			"<rect class=\"legend\" x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\" "
			"rx=\"2\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
			x, y - 10, color, x + 18, y, items[i].text);
		x += 18 + 7 * (int)strlen(items[i].text) + 20;
	}
}

/* The short names of the files the profile's frames name (Python files
 * and native modules alike). */
static void name_files(const struct report *rep, struct path_suffixes *files)
{
	const char **paths = malloc((rep->nframes ? rep->nframes : 1) * sizeof(*paths));
	size_t n = 0;

	for (size_t i = 0; paths && i < rep->nframes; i++) {
		const struct report_frame *f = &rep->frames[i];

		if (f->kind == REPORT_FRAME_PYTHON || f->kind == REPORT_FRAME_NATIVE)
			paths[n++] = f->kind == REPORT_FRAME_PYTHON ? f->file : f->module;
	}
	if (!paths || path_suffixes_init(files, paths, n) < 0)
		*files = (struct path_suffixes){ 0 }; /* base names */
	free(paths);
}

int report_write_svg(const struct report *rep, FILE *out, const char *title,
		     const char *unit)
{
	struct fnode root = { .kind = BOX_THREAD };
	struct path_suffixes files;
	int depth, height;

	root.key = strdup("");
	root.label = strdup("all");
	root.full = strdup("all");
	if (!root.key || !root.label || !root.full) {
		free_node(&root);
		return -1;
	}
	name_files(rep, &files);
	for (size_t i = 0; i < rep->n; i++)
		add_path(&root, rep, &files, &rep->rows[i]);
	path_suffixes_free(&files);
	depth = depth_of(&root);
	height = TOP + (depth + 1) * ROW + BOTTOM;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"onload=\"init()\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"#reset,#search{cursor:pointer}#subtitle{fill:#555}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\">",
		WIDTH, height, WIDTH, height, WIDTH, height, WIDTH / 2);
	xml_escape(out, title);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"44\" text-anchor=\"middle\">",
		WIDTH / 2);
	write_subtitle(out, rep, root.value, unit);
	fprintf(out,
		"</text>\n<text id=\"reset\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n"
		"<text x=\"%d\" y=\"%d\">click a box to zoom; hover for the full path and the lines"
		"</text>\n",
		PAD, WIDTH - 60, WIDTH - 160, height - 12, PAD, height - 12);
	write_legend(out, height - 30);
	fputs(script, out);
	if (root.value)
		draw(out, &root, PAD, 0, depth, (double)(WIDTH - 2 * PAD) / (double)root.value,
		     root.value, unit);
	fputs("</svg>\n", out);
	free_node(&root);
	return ferror(out) ? -1 : 0;
}
