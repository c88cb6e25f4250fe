/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A self-contained interactive flame graph: one SVG file with a small
 * script (click to zoom, Ctrl-F or the Search button to highlight), that
 * any browser opens. No Perl, no external files.
 */
#include "report/svg.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>


#define WIDTH 1200
#define PAD 10
#define ROW 16
#define TOP 50
#define BOTTOM 30
#define MIN_PX 0.1

struct fnode {
	char *name;
	enum report_frame_kind kind;
	uint64_t value;
	struct fnode *kids;
	size_t nkids, cap;
};

static struct fnode *child(struct fnode *n, const char *name, size_t len)
{
	for (size_t i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i].name) == len && memcmp(n->kids[i].name, name, len) == 0)
			return &n->kids[i];
	if (n->nkids == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4;
		struct fnode *v = realloc(n->kids, cap * sizeof(*v));

		if (!v)
			return NULL;
		n->kids = v;
		n->cap = cap;
	}
	struct fnode *c = &n->kids[n->nkids];

	memset(c, 0, sizeof(*c));
	c->kind = REPORT_FRAME_MARKER;
	c->name = strndup(name, len);
	if (!c->name)
		return NULL;
	n->nkids++;
	return c;
}

static void add_path(struct fnode *root, const struct report *rep, const struct report_row *r)
{
	struct fnode *n = child(root, r->comm, strlen(r->comm));

	root->value += r->value;
	for (int i = 0; n && i < r->nframes; i++) {
		const struct report_frame *f = &rep->frames[r->frames[i]];
		size_t len = report_frame_label(f, NULL, 0);
		char *label = malloc(len + 1);

		n->value += r->value;
		if (!label)
			return;
		report_frame_label(f, label, len + 1);
		n = child(n, label, len);
		if (n)
			n->kind = f->kind;
		free(label);
	}
	if (n)
		n->value += r->value;
}

static int kid_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fnode *)a)->name, ((const struct fnode *)b)->name);
}

static int depth_of(struct fnode *n)
{
	int d = 0;

	if (n->nkids) /* leaves have no array: qsort wants one */
		qsort(n->kids, n->nkids, sizeof(*n->kids), kid_cmp);
	for (size_t i = 0; i < n->nkids; i++) {
		int k = depth_of(&n->kids[i]) + 1;

		if (k > d)
			d = k;
	}
	return d;
}

static void free_tree(struct fnode *n)
{
	for (size_t i = 0; i < n->nkids; i++)
		free_tree(&n->kids[i]);
	free(n->kids);
	free(n->name);
}

/* Bytes of the character at s if it is valid UTF-8 that XML allows
 * (names come from hostile processes and binaries), else 0. */
static size_t xml_char_len(const unsigned char *s)
{
	size_t n = *s >= 0xf0 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 ? 2 : 1;
	uint32_t cp = n == 1 ? *s : *s & (0x7fu >> n);

	if (*s >= 0x80 && (n == 1 || *s > 0xf4))
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

static void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		size_t n = xml_char_len((const unsigned char *)s);

		if (n != 1) { /* a character of its own, or U+FFFD for bad bytes */
			fwrite(n ? s : "\xef\xbf\xbd", 1, n ? n : 3, out);
			s += n ? n - 1 : 0;
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

/* Python frames green, kernel orange, native red, markers grey. */
static void color_of(const struct fnode *n, char *buf, size_t len)
{
	uint32_t h = 2166136261u;

	for (const char *p = n->name; *p && *p != '('; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	unsigned v = h % 55;

	switch (n->kind) {
	case REPORT_FRAME_PYTHON:
		snprintf(buf, len, "rgb(%u,%u,%u)", 80 + v, 190 + v / 2, 80 + v / 3);
		break;
	case REPORT_FRAME_KERNEL:
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + v / 2, 120 + v, 30u);
		break;
	case REPORT_FRAME_NATIVE:
		snprintf(buf, len, "rgb(%u,%u,%u)", 225 + v / 2, 80 + v, 60 + v / 2);
		break;
	default:
		snprintf(buf, len, "rgb(%u,%u,%u)", 160 + v / 2, 160 + v / 2, 160 + v / 2);
	}
}

static void draw(FILE *out, const struct fnode *n, double x, int depth, int max_depth,
		 double scale, uint64_t total, const char *unit)
{
	double w = (double)n->value * scale;
	int y = TOP + (max_depth - depth) * ROW;
	char color[32];

	if (w < MIN_PX)
		return;
	color_of(n, color, sizeof(color));
	fprintf(out, "<g class=\"f\"><title>");
	xml_escape(out, n->name);
	fprintf(out, " (%llu %s, %.2f%%)</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" "
		     "height=\"%d\" fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		(unsigned long long)n->value, unit, 100.0 * (double)n->value / (double)total, x, y,
		w, ROW - 1, color, x + 3, y + ROW - 4);
	write_label(out, n->name, w);
	fputs("</text></g>\n", out);
	for (size_t i = 0; i < n->nkids; i++) {
		draw(out, &n->kids[i], x, depth + 1, max_depth, scale, total, unit);
		x += (double)n->kids[i].value * scale;
	}
}

/* The viewer: zoom on click, search, labels that fit. */
static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W=" "1200" ",P=10,frames=[],zoomed=null;\n"
	"function init(){var gs=document.querySelectorAll('g.f');for(var i=0;i<gs.length;i++){\n"
	" var g=gs[i],r=g.querySelector('rect');var t=g.querySelector('title').textContent;\n"
	" var f={g:g,r:r,t:g.querySelector('text'),x:+r.getAttribute('x'),w:+r.getAttribute('width'),\n"
	"  y:+r.getAttribute('y'),name:t.replace(/ \\([^()]*%\\)$/,''),fill:r.getAttribute('fill')};\n"
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
	"function search(){var q=prompt('Search (regular expression)','');if(q===null)return;\n"
	" var re;try{re=new RegExp(q)}catch(e){alert(e);return}var hit=[],total=0,end=-1;\n"
	" frames.forEach(function(f){var m=q!==''&&re.test(f.name);f.r.setAttribute('fill',m?'rgb(230,0,230)':f.fill);if(m)hit.push(f)});\n"
	" hit.sort(function(a,b){return a.x-b.x});hit.forEach(function(f){if(f.x>=end){total+=f.w;end=f.x+f.w}});\n"
	" document.getElementById('matched').textContent=q===''?'':'Matched: '+(100*total/(W-2*P)).toFixed(1)+'%';}\n"
	"]]></script>\n";

int report_write_svg(const struct report *rep, FILE *out, const char *title,
		     const char *unit)
{
	struct fnode root = { 0 };
	int depth, height;

	root.name = strdup("all");
	if (!root.name)
		return -1;
	for (size_t i = 0; i < rep->n; i++)
		add_path(&root, rep, &rep->rows[i]);
	depth = depth_of(&root);
	height = TOP + (depth + 1) * ROW + BOTTOM;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"onload=\"init()\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
		"#reset,#search{cursor:pointer}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%d\" y=\"24\" text-anchor=\"middle\" style=\"font-size:17px\">",
		WIDTH, height, WIDTH, height, WIDTH, height, WIDTH / 2);
	xml_escape(out, title);
	fprintf(out,
		"</text>\n<text id=\"reset\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n"
		"<text x=\"%d\" y=\"%d\">%llu %s in all; click a frame to zoom</text>\n",
		PAD, WIDTH - 60, WIDTH - 160, height - 10, PAD, height - 10,
		(unsigned long long)root.value, unit);
	fputs(script, out);
	if (root.value)
		draw(out, &root, PAD, 0, depth, (double)(WIDTH - 2 * PAD) / (double)root.value,
		     root.value, unit);
	fputs("</svg>\n", out);
	free_tree(&root);
	return ferror(out) ? -1 : 0;
}
