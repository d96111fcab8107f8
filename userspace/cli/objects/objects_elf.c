// SPDX-License-Identifier: GPL-2.0-only
/* Global data structures from an ELF file's symbol tables (libelf). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objects.h"

static Elf *elf_open(const char *path, int *fd)
{
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return e;
}

static void elf_close(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

int obj_elf_is_static(const char *path)
{
	size_t n;
	int fd, ret = 1;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	if (elf_getphdrnum(e, &n)) {
		elf_close(e, fd);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
			ret = 0;
	}
	elf_close(e, fd);
	return ret;
}

int obj_elf_has_symtab(const char *path)
{
	Elf_Scn *scn = NULL;
	int fd, ret = 0;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			ret = 1;
	}
	elf_close(e, fd);
	return ret;
}

int obj_elf_bias(const char *path, uint64_t map_start, uint64_t *bias)
{
	uint64_t lo = UINT64_MAX;
	GElf_Ehdr eh;
	size_t n;
	int fd;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &n)) {
		elf_close(e, fd);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    ph.p_offset == 0 && ph.p_vaddr < lo)
			lo = ph.p_vaddr;
	}
	elf_close(e, fd);
	/* ET_EXEC is linked at its final addresses */
	*bias = eh.e_type == ET_DYN && lo != UINT64_MAX ? map_start - lo : 0;
	return 0;
}

static int known(const struct obj_set *s, size_t from, uint64_t start)
{
	for (size_t i = from; i < s->n; i++)
		if (s->v[i].start == start)
			return 1;
	return 0;
}

int obj_elf_globals(struct obj_set *s, const char *path, uint64_t bias, uint64_t min)
{
	Elf_Scn *scn = NULL;
	size_t first = s->n;
	int fd, added = 0;
	Elf *e = elf_open(path, &fd);

	if (!e)
		return -errno;
	/* .symtab first (it has the static ones), .dynsym adds nothing new then */
	for (int pass = 0; pass < 2; pass++) {
		Elf32_Word want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *name;
				struct obj *o;

				if (!gelf_getsym(d, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
				    sym.st_shndx == SHN_UNDEF || sym.st_size < min ||
				    known(s, first, sym.st_value + bias))
					continue;
				name = elf_strptr(e, sh.sh_link, sym.st_name);
				o = obj_add(s);
				if (!o) {
					elf_close(e, fd);
					return -ENOMEM;
				}
				o->kind = OBJ_GLOBAL;
				o->name = strdup(name && *name ? name : "?");
				o->module = strdup(path);
				o->start = sym.st_value + bias;
				o->end = o->start + sym.st_size;
				o->alloc_ns = 0;
				added++;
			}
		}
		scn = NULL;
	}
	elf_close(e, fd);
	return added;
}
