// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter without an HTTP server, for the statically linked CLI
 * (make STATIC=1, the test VM's /usr/bin/daptrace): Debian's libmicrohttpd
 * needs gnutls, whose dependencies (p11-kit, libunistring) ship no static
 * library.  --no-http --textfile DIR still works.
 */
#include <stdlib.h>

#include "cli.h"
#include "exporter.h"

int exp_http_start(struct exp_http **hp, const char *spec, const char *what,
		   char *bound, size_t bound_len)
{
	(void)spec;
	(void)bound;
	(void)bound_len;
	*hp = NULL;
	return usage_error("exporter", "%s: this daptrace is linked statically, without "
			   "an HTTP server; use --no-http --textfile DIR, or the dynamically "
			   "linked daptrace", what);
}

void exp_http_publish(struct exp_http *h, char *text, size_t text_len, char *om,
		      size_t om_len)
{
	(void)h;
	(void)text_len;
	(void)om_len;
	free(text);
	free(om);
}

uint64_t exp_http_scrapes(const struct exp_http *h)
{
	(void)h;
	return 0;
}

void exp_http_stop(struct exp_http *h)
{
	(void)h;
}
