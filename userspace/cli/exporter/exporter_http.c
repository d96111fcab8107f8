// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter: /metrics over HTTP, served by libmicrohttpd in a
 * thread of its own.  The listening socket is ours (so that "address in
 * use" or "not an address of this machine" is a clear message naming
 * --listen, before anything else is done); libmicrohttpd speaks HTTP on it.
 *
 * A request copies the newest text under a mutex that the reader thread
 * takes only to swap the pointers: a scrape never reads the kernel and
 * never makes the reader wait longer than that copy.  The format follows
 * the request's Accept header: OpenMetrics 1.0.0 if it prefers it (as
 * Prometheus does), else the text format 0.0.4.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "exporter.h"
#include "common/units.h"

#define CMD		"exporter"
#define MAX_CONNECTIONS	32
#define CONN_TIMEOUT_S	10

struct exp_http {
	struct MHD_Daemon *d;
	int fd;
	pthread_mutex_t lock;
	char *text, *om;
	size_t text_len, om_len;
	uint64_t scrapes;		/* atomic */
};

static const char index_page[] =
	"<html><head><title>daptrace exporter</title></head><body>\n"
	"<h1>daptrace exporter</h1>\n"
	"<p><a href=\"/metrics\">Metrics</a> (docs/exporter.md lists them)</p>\n"
	"</body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_len, void **req_cls)
{
	static const char plain[] = "text/plain; charset=utf-8";
	static const char method_msg[] = "GET or HEAD only\n";
	static const char missing_msg[] = "not found: try /metrics\n";
	struct exp_http *h = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	const char *accept;
	int om;

	(void)version;
	(void)upload;
	(void)req_cls;
	if (*upload_len)
		return MHD_NO;		/* a body: not a scraper */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, plain, method_msg,
			     sizeof(method_msg) - 1);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page,
			     sizeof(index_page) - 1);
	if (strcmp(url, "/metrics"))
		return reply(c, MHD_HTTP_NOT_FOUND, plain, missing_msg, sizeof(missing_msg) - 1);
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	om = mset_accept_openmetrics(accept);
	pthread_mutex_lock(&h->lock);
	r = MHD_create_response_from_buffer(om ? h->om_len : h->text_len,
					    om ? h->om : h->text, MHD_RESPMEM_MUST_COPY);
	pthread_mutex_unlock(&h->lock);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, mset_content_type(om));
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	__atomic_add_fetch(&h->scrapes, 1, __ATOMIC_RELAXED);
	return ret;
}

/* libmicrohttpd's own complaints (a refused connection, ...) with our prefix. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fprintf(stderr, "%s %s: libmicrohttpd: ", prog, CMD);
	vfprintf(stderr, fmt, ap);
}

/* "ADDR:PORT" or "[ADDR6]:PORT", numeric only, into @ss. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *h = spec;
	uint64_t port;
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	if (*spec == '[') {
		const char *end = strchr(spec, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		h = spec + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - spec);
	}
	if (!hl || hl >= sizeof(host) || parse_u64_dec(colon + 1, &port) || port > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (*spec == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return inet_pton(AF_INET6, host, &a->sin6_addr) == 1 ? 0 : -EINVAL;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -EINVAL;
	}
}

static const char *bind_hint(int err)
{
	switch (err) {
	case EADDRINUSE:
		return " (another program, or another exporter, listens there)";
	case EADDRNOTAVAIL:
		return " (not an address of this machine)";
	case EACCES:
		return " (a port below 1024 needs CAP_NET_BIND_SERVICE)";
	default:
		return "";
	}
}

/* Where the socket is bound, e.g. "127.0.0.1:9798" (port 0 resolved). */
static void bound_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		snprintf(buf, len, "?");
		return;
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(s4->sin_port));
	}
}

int exp_http_start(struct exp_http **hp, const char *spec, const char *what,
		   char *bound, size_t bound_len)
{
	struct sockaddr_storage ss;
	struct exp_http *h;
	socklen_t sl;
	int one = 1, err;

	*hp = NULL;
	if (parse_listen(spec, &ss, &sl))
		return bad_value(CMD, what, spec,
				 "expected ADDRESS:PORT with a numeric address, e.g. "
				 "127.0.0.1:9798 or [::1]:9798");
	h = calloc(1, sizeof(*h));
	if (!h)
		return fail(CMD, "out of memory");
	pthread_mutex_init(&h->lock, NULL);
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0) {
		err = errno;
		free(h);
		return fail(CMD, "%s %s: socket: %s", what, spec, strerror(err));
	}
	/* a restart may bind while old connections linger in TIME_WAIT */
	setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->fd, (struct sockaddr *)&ss, sl) || listen(h->fd, 64)) {
		err = errno;
		close(h->fd);
		free(h);
		return fail(CMD, "%s %s: cannot listen: %s%s", what, spec, strerror(err),
			    bind_hint(err));
	}
	bound_name(h->fd, bound, bound_len);
	h->text = strdup("");
	h->om = strdup("# EOF\n");
	h->om_len = h->om ? strlen(h->om) : 0;
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
				MHD_USE_ERROR_LOG, 0, NULL, NULL, handle, h,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_LISTEN_SOCKET, h->fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONN_TIMEOUT_S,
				MHD_OPTION_END);
	if (!h->d || !h->text || !h->om) {
		/* the socket is libmicrohttpd's once given: not closed here */
		if (h->d)
			MHD_stop_daemon(h->d);
		free(h->text);
		free(h->om);
		free(h);
		return fail(CMD, "%s %s: the HTTP server (libmicrohttpd) did not start", what,
			    spec);
	}
	*hp = h;
	return 0;
}

void exp_http_publish(struct exp_http *h, char *text, size_t text_len, char *om,
		      size_t om_len)
{
	char *old_text, *old_om;

	pthread_mutex_lock(&h->lock);
	old_text = h->text;
	old_om = h->om;
	h->text = text;
	h->text_len = text_len;
	h->om = om;
	h->om_len = om_len;
	pthread_mutex_unlock(&h->lock);
	free(old_text);
	free(old_om);
}

uint64_t exp_http_scrapes(const struct exp_http *h)
{
	return __atomic_load_n(&h->scrapes, __ATOMIC_RELAXED);
}

void exp_http_stop(struct exp_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);		/* closes the listening socket too */
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h->om);
	free(h);
}
