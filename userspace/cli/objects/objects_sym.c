// SPDX-License-Identifier: GPL-2.0-only
/*
 * Name heap and mmap objects after their call sites with elfutils' libdw:
 * the ELF files the tracer logged (path + load bias) are reported to an
 * offline Dwfl at their run-time addresses, so a return address resolves
 * directly to function and file:line.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void name_object(Dwfl *d, struct obj *o)
{
	/* a return address: its call is the instruction before */
	Dwarf_Addr pc = o->site ? o->site - 1 : 0;
	Dwfl_Module *m = d ? dwfl_addrmodule(d, pc) : NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *fn = m ? dwfl_module_addrinfo(m, pc, &off, &sym, NULL, NULL, NULL) : NULL;
	Dwfl_Line *l = m ? dwfl_module_getsrc(m, pc) : NULL;
	const char *file = NULL;
	int line = 0, n;
	char *name = NULL;

	if (l)
		file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	if (fn) {
		free(o->function);
		o->function = strdup(fn);
	}
	if (file) {
		const char *base = strrchr(file, '/');

		free(o->source);
		if (asprintf(&o->source, "%s:%d", base ? base + 1 : file, line) < 0)
			o->source = NULL;
	}
	if (o->source && fn)
		n = asprintf(&name, "%s@%s", fn, o->source);
	else if (fn)
		n = asprintf(&name, "%s+%#" PRIx64, fn, (uint64_t)off + 1);
	else
		n = asprintf(&name, "%s@%#" PRIx64, obj_kind_name(o->kind), o->site);
	if (n < 0)
		name = NULL;
	free(o->name);
	o->name = name;
}

/* One Dwfl per exec'ed image: each has its own modules and load biases. */
static Dwfl *image_dwfl(const struct obj_set *s, int image, int *failed)
{
	Dwfl *d = dwfl_begin(&callbacks);

	if (!d)
		return NULL;
	dwfl_report_begin(d);
	for (size_t i = 0; i < s->nr_mods; i++) {
		const struct obj_module *m = &s->mods[i];
		const char *base = strrchr(m->path, '/');

		if (m->image == image &&
		    !dwfl_report_elf(d, base ? base + 1 : m->path, m->path, -1, m->bias, false))
			(*failed)++;
	}
	dwfl_report_end(d, NULL, NULL);
	return d;
}

int obj_symbolise(struct obj_set *s)
{
	int failed = 0, stacks = 0, nomem = 0;

	for (int img = 0; img <= s->image; img++) {
		Dwfl *d = image_dwfl(s, img, &failed);

		nomem |= !d;
		for (size_t i = 0; i < s->n; i++)
			if (s->v[i].image == img &&
			    (s->v[i].kind == OBJ_HEAP || s->v[i].kind == OBJ_MMAP))
				name_object(d, &s->v[i]);
		if (d)
			dwfl_end(d);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct obj *o = &s->v[i];

		if (o->kind == OBJ_STACK && !o->name) {
			/* Stack#0 is the main thread's (named when found), the
			 * others are numbered in the order they started */
			if (asprintf(&o->name, "Stack#%d", ++stacks) < 0)
				o->name = NULL;
		}
	}
	return nomem ? -ENOMEM : -failed;
}
