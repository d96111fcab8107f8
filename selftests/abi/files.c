// SPDX-License-Identifier: GPL-2.0
/*
 * The documentation in sysfs-docs/ and the files in /sys/kernel/daptrace
 * agree: every documented node exists with the documented mode (the
 * "Permissions: 0NNN" line of its Description), every node that exists is
 * documented, and every stanza has the Documentation/ABI fields.
 *
 * The docs are found at $DAPTRACE_DOCS, /sysfs-docs (the test VM) or
 * ../../sysfs-docs (run from selftests/abi/ in the source tree).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <limits.h>

#include "kselftest_harness.h"
#include "daptrace_sysfs.h"

#define MAX_DOCS	128

struct doc {
	char file[128];		/* name of the doc file */
	char what[256];		/* What: path */
	int nr_what;
	int nr_date, nr_kver, nr_contact, nr_desc;
	int nr_perm;
	int perm;		/* Permissions: value, -1 if absent/bad */
	int line_perm;		/* line of a malformed Permissions:, or 0 */
};

struct docs {
	char dir[PATH_MAX];
	int nr;
	struct doc doc[MAX_DOCS];
};

static const char *docs_dir(char *buf, size_t len)
{
	const char *env = getenv("DAPTRACE_DOCS");
	const char *cand[] = { env, "/sysfs-docs", "../../sysfs-docs" };
	struct stat st;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cand); i++) {
		if (!cand[i] || !*cand[i])
			continue;
		if (stat(cand[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(buf, len, "%s", cand[i]);
			return buf;
		}
		if (cand[i] == env)	/* set but wrong: do not guess */
			return NULL;
	}
	return NULL;
}

/* Bounded copy that -Wformat-truncation does not second-guess. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static char *skip_blank(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static void rstrip(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

static int parse_doc(const char *dir, const char *name, struct doc *d)
{
	char path[PATH_MAX], line[1024], *v;
	int lineno = 0;
	FILE *f;

	memset(d, 0, sizeof(*d));
	d->perm = -1;
	snprintf(d->file, sizeof(d->file), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		rstrip(line);
		if (!strncmp(line, "What:", 5)) {
			d->nr_what++;
			copy_str(d->what, sizeof(d->what), skip_blank(line + 5));
		} else if (!strncmp(line, "Date:", 5)) {
			d->nr_date += !!*skip_blank(line + 5);
		} else if (!strncmp(line, "KernelVersion:", 14)) {
			d->nr_kver += !!*skip_blank(line + 14);
		} else if (!strncmp(line, "Contact:", 8)) {
			d->nr_contact += !!*skip_blank(line + 8);
		} else if (!strncmp(line, "Description:", 12)) {
			d->nr_desc++;
		} else if ((line[0] == '\t' || line[0] == ' ') &&
			   !strncmp(skip_blank(line), "Permissions:", 12)) {
			char *end;
			long p;

			d->nr_perm++;
			v = skip_blank(skip_blank(line) + 12);
			p = strtol(v, &end, 8);
			if (v[0] != '0' || strlen(v) != 4 || *end || p < 0 || p > 07777)
				d->line_perm = lineno;
			else
				d->perm = p;
		}
	}
	fclose(f);
	return 0;
}

static int load_docs(struct docs *docs)
{
	struct dirent *de;
	DIR *dir;
	int err = 0;

	docs->nr = 0;
	if (!docs_dir(docs->dir, sizeof(docs->dir)))
		return -ENOENT;
	dir = opendir(docs->dir);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "sysfs-", 6))
			continue;
		if (docs->nr == MAX_DOCS) {
			err = -E2BIG;
			break;
		}
		err = parse_doc(docs->dir, de->d_name, &docs->doc[docs->nr++]);
		if (err)
			break;
	}
	closedir(dir);
	return err;
}

/* "/sys/kernel/daptrace/" -> "/sys/kernel/daptrace" */
static void strip_slash(char *s)
{
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
}

static struct doc *find_doc(struct docs *docs, const char *path)
{
	char what[256];
	int i;

	for (i = 0; i < docs->nr; i++) {
		snprintf(what, sizeof(what), "%s", docs->doc[i].what);
		strip_slash(what);
		if (!strcmp(what, path))
			return &docs->doc[i];
	}
	return NULL;
}

FIXTURE(docs) {
	struct docs docs;
};

FIXTURE_SETUP(docs)
{
	int err = load_docs(&self->docs);

	ASSERT_EQ(0, err) {
		TH_LOG("cannot load the ABI docs (%s): %s; set DAPTRACE_DOCS "
		       "or put sysfs-docs/ at /sysfs-docs", self->docs.dir,
		       strerror(-err));
	}
	ASSERT_LT(0, self->docs.nr) {
		TH_LOG("no sysfs-* files in %s", self->docs.dir);
	}
	TH_LOG("%d doc files in %s", self->docs.nr, self->docs.dir);
}

FIXTURE_TEARDOWN(docs)
{
}

/* Documentation/ABI fields, one stanza per file, named after the path. */
TEST_F(docs, every_doc_file_is_one_wellformed_stanza)
{
	int i;

	for (i = 0; i < self->docs.nr; i++) {
		struct doc *d = &self->docs.doc[i];
		char want[300], what[256], *c;

		EXPECT_EQ(1, d->nr_what) TH_LOG("%s: %d What: lines, want 1",
						 d->file, d->nr_what);
		EXPECT_EQ(1, d->nr_date) TH_LOG("%s: Date: missing", d->file);
		EXPECT_EQ(1, d->nr_kver) TH_LOG("%s: KernelVersion: missing", d->file);
		EXPECT_EQ(1, d->nr_contact) TH_LOG("%s: Contact: missing", d->file);
		EXPECT_EQ(1, d->nr_desc) TH_LOG("%s: Description: missing", d->file);
		EXPECT_EQ(1, d->nr_perm) {
			TH_LOG("%s: %d 'Permissions: 0NNN' lines in the "
			       "Description, want 1", d->file, d->nr_perm);
		}
		EXPECT_EQ(0, d->line_perm) {
			TH_LOG("%s:%d: Permissions: wants four octal digits",
			       d->file, d->line_perm);
		}
		EXPECT_EQ(0, strncmp(d->what, DT_SYSFS, strlen(DT_SYSFS))) {
			TH_LOG("%s: What: %s is not under %s", d->file,
			       d->what, DT_SYSFS);
		}
		/* The kernel's naming: path below /sys, '/' -> '-'. */
		snprintf(what, sizeof(what), "%s", d->what);
		strip_slash(what);
		snprintf(want, sizeof(want), "sysfs-%s",
			 strncmp(what, "/sys/", 5) ? what : what + 5);
		for (c = want; *c; c++)
			if (*c == '/')
				*c = '-';
		EXPECT_STREQ(want, d->file) {
			TH_LOG("doc file for %s should be named %s", d->what, want);
		}
	}
}

TEST_F(docs, documented_nodes_exist_with_documented_mode)
{
	int i;

	ASSERT_TRUE(dt_loaded()) TH_LOG("%s missing: module not loaded", DT_SYSFS);
	ASSERT_NE(NULL, find_doc(&self->docs, DT_SYSFS)) {
		TH_LOG("the directory %s itself is not documented", DT_SYSFS);
	}
	for (i = 0; i < self->docs.nr; i++) {
		struct doc *d = &self->docs.doc[i];
		char path[256];
		struct stat st;

		snprintf(path, sizeof(path), "%s", d->what);
		strip_slash(path);
		if (stat(path, &st)) {
			EXPECT_EQ(0, -errno) {
				TH_LOG("%s documents %s, stat: %s", d->file,
				       path, strerror(errno));
			}
			continue;
		}
		if (d->perm < 0)
			continue;	/* reported by the well-formed test */
		EXPECT_EQ(d->perm, (int)(st.st_mode & 07777)) {
			TH_LOG("%s: mode %04o, documented %04o", path,
			       st.st_mode & 07777, d->perm);
		}
		if (!strcmp(path, DT_SYSFS)) {
			EXPECT_TRUE(S_ISDIR(st.st_mode)) TH_LOG("%s not a dir", path);
		} else {
			EXPECT_TRUE(S_ISREG(st.st_mode)) TH_LOG("%s not a file", path);
		}
	}
}

TEST_F(docs, every_node_is_documented)
{
	struct dirent *de;
	char path[512];
	int nr = 0;
	DIR *dir;

	dir = opendir(DT_SYSFS);
	ASSERT_NE(NULL, dir) TH_LOG("opendir %s: %s", DT_SYSFS, strerror(errno));
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		nr++;
		snprintf(path, sizeof(path), DT_SYSFS "/%s", de->d_name);
		EXPECT_NE(NULL, find_doc(&self->docs, path)) {
			TH_LOG("%s exists but no sysfs-docs file documents it",
			       path);
		}
	}
	closedir(dir);
	/* Directory stanza plus one per file. */
	EXPECT_EQ(self->docs.nr, nr + 1) {
		TH_LOG("%d doc files for %d nodes + the directory",
		       self->docs.nr, nr);
	}
}

TEST_F(docs, nodes_are_owned_by_root)
{
	struct dirent *de;
	char path[512];
	struct stat st;
	DIR *dir;

	dir = opendir(DT_SYSFS);
	ASSERT_NE(NULL, dir) TH_LOG("opendir %s: %s", DT_SYSFS, strerror(errno));
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), DT_SYSFS "/%s", de->d_name);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("stat %s", path);
		EXPECT_EQ(0, st.st_uid) TH_LOG("%s uid %d", path, st.st_uid);
		EXPECT_EQ(0, st.st_gid) TH_LOG("%s gid %d", path, st.st_gid);
		/* "files root-only": nothing for group or others. */
		EXPECT_EQ(0, st.st_mode & 077) {
			TH_LOG("%s mode %04o gives access beyond root", path,
			       st.st_mode & 07777);
		}
	}
	closedir(dir);
}

TEST_HARNESS_MAIN
