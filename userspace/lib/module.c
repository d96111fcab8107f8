// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Why /sys/kernel/daptrace is missing, and what to do about it: the module is
 * not installed for the running kernel, the kernel is not of a series
 * daptrace is verified on (and no module was built for it anyway), or it
 * is installed but not loaded -- perhaps because the kernel
 * loads only signed modules (Secure Boot lockdown, module.sig_enforce) and
 * this one is unsigned or signed by a key the machine has not enrolled.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "internal.h"

/*
 * Whether @release ("6.12.57+deb13-amd64") is of a series daptrace is
 * verified on: DAPTRACE_VERIFIED_SERIES, Kbuild's list ("5.10 6.1 ...").
 */
static int dt_series_verified(const char *release)
{
	const char *s = DAPTRACE_VERIFIED_SERIES;

	while (*s) {
		size_t n = strcspn(s, " ");

		if (n && !strncmp(release, s, n) && release[n] == '.')
			return 1;
		s += n;
		s += strspn(s, " ");
	}
	return 0;
}

/* DKMS's default signing key (/etc/dkms/framework.conf). */
#define DT_MOK_CERT	"/var/lib/dkms/mok.pub"

/* The module as the kernel's module tools would find it (first match). */
static const char *const dt_module_paths[] = {
	"updates/dkms/daptrace.ko", "updates/daptrace.ko", "extra/daptrace.ko",
	"kernel/daptrace.ko",
};
static const char *const dt_module_exts[] = { "", ".xz", ".zst", ".gz" };

/* The first line of @prefix@path into @buf, without its newline; 0 or -1. */
static int dt_read_line(const char *prefix, const char *path, char *buf,
			size_t len)
{
	char name[PATH_MAX];
	FILE *f;

	snprintf(name, sizeof(name), "%s%s", prefix, path);
	f = fopen(name, "re");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int dt_loaded(const char *prefix)
{
	char name[PATH_MAX], line[256];
	int found = 0;
	FILE *f;

	snprintf(name, sizeof(name), "%s/proc/modules", prefix);
	f = fopen(name, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "daptrace ", 9);
	fclose(f);
	return found;
}

/* Does the kernel refuse unsigned modules, and why (for the message)? */
static const char *dt_enforcing(const char *prefix)
{
	char buf[128];

	if (!dt_read_line(prefix, "/sys/kernel/security/lockdown", buf, sizeof(buf)) &&
	    (strstr(buf, "[integrity]") || strstr(buf, "[confidentiality]")))
		return "kernel lockdown (Secure Boot)";
	if (!dt_read_line(prefix, "/sys/module/module/parameters/sig_enforce",
			  buf, sizeof(buf)) && buf[0] == 'Y')
		return "module.sig_enforce";
	return NULL;
}

/*
 * Signed modules end with the magic string of scripts/sign-file.  Only an
 * uncompressed file can be looked at: 1 signed, 0 not, -1 unknown.
 */
static int dt_signed(const char *path)
{
	static const char magic[] = "~Module signature appended~\n";
	char tail[sizeof(magic) - 1];
	struct stat st;
	FILE *f;
	int ret = -1;

	if (strcmp(path + strlen(path) - 3, ".ko"))
		return -1;
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fstat(fileno(f), &st))
		ret = -1;
	else if (st.st_size < (off_t)sizeof(tail))
		ret = 0;
	else if (!fseeko(f, st.st_size - (off_t)sizeof(tail), SEEK_SET) &&
		 fread(tail, 1, sizeof(tail), f) == sizeof(tail))
		ret = !memcmp(tail, magic, sizeof(tail));
	fclose(f);
	return ret;
}

/* The installed module for @release under @prefix into @path; 0 or -1. */
static int dt_find_module(const char *prefix, const char *release, char *path,
			  size_t len)
{
	size_t i, j;

	for (i = 0; i < sizeof(dt_module_paths) / sizeof(dt_module_paths[0]); i++) {
		for (j = 0; j < sizeof(dt_module_exts) / sizeof(dt_module_exts[0]); j++) {
			snprintf(path, len, "%s/lib/modules/%s/%s%s", prefix,
				 release, dt_module_paths[i], dt_module_exts[j]);
			if (!access(path, F_OK))
				return 0;
		}
	}
	return -1;
}

/**
 * dt_module_why() - why the module's sysfs directory is missing.
 * @prefix:	Root of the filesystem to look at ("" for the real one).
 * @release:	Kernel release (uname -r), or NULL for the running kernel's.
 * @buf:	The explanation, with what to do, one sentence or two.
 * @len:	Size of @buf.
 */
void dt_module_why(const char *prefix, const char *release, char *buf,
		   size_t len)
{
	char path[PATH_MAX];
	struct utsname u;
	const char *enf;
	int sig;

	if (!release) {
		if (uname(&u) < 0) {
			snprintf(buf, len, "daptrace.ko is not loaded");
			return;
		}
		release = u.release;
	}
	if (dt_loaded(prefix)) {
		snprintf(buf, len, "daptrace.ko is loaded, but its sysfs directory is missing: is sysfs mounted?");
		return;
	}
	if (dt_find_module(prefix, release, path, sizeof(path)) &&
	    !dt_series_verified(release)) {
		snprintf(buf, len, "daptrace.ko is not loaded, and kernel %s is not of a series daptrace is verified on (Linux %s); to use it anyway, build the module with DAPTRACE_UNVERIFIED=1 ('make install DAPTRACE_UNVERIFIED=1 KVER=%s' in the source, or DAPTRACE_UNVERIFIED=1 in /etc/dkms/daptrace.conf and 'dkms autoinstall'), knowing what that means (README, \"Supported kernels\")",
			 release, DAPTRACE_VERIFIED_SERIES, release);
		return;
	}
	if (dt_find_module(prefix, release, path, sizeof(path))) {
		snprintf(buf, len, "daptrace.ko is not installed for kernel %s: install the daptrace-dkms package or run 'make dkms-install' (both need linux-headers-%s), then 'modprobe daptrace'",
			 release, release);
		return;
	}
	enf = dt_enforcing(prefix);
	sig = dt_signed(path);
	if (enf && sig == 0)
		snprintf(buf, len, "daptrace.ko is not loaded: %s admits only signed modules, and %s is not signed; rebuild it through DKMS ('make dkms-install' or the daptrace-dkms package), which signs it with %s's key, enrol that key with 'mokutil --import %s', reboot and confirm it in the MOK manager",
			 enf, path + strlen(prefix), DT_MOK_CERT, DT_MOK_CERT);
	else if (enf)
		snprintf(buf, len, "daptrace.ko is not loaded: run 'modprobe daptrace' as root; %s admits only signed modules: if modprobe says 'Key was rejected by service', enrol the signing key ('mokutil --import %s' for DKMS's), reboot and confirm it in the MOK manager",
			 enf, DT_MOK_CERT);
	else
		snprintf(buf, len, "daptrace.ko is installed (%s) but not loaded: run 'modprobe daptrace' as root",
			 path + strlen(prefix));
}
