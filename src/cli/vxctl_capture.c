/* vxctl capture (vxctl_capture.h). */
#include <errno.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/vxctl_capture.h"
#include "ctl/ctl_capture.h"
#include "ctl/ctl_proto.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct sink {
	pcap_t *dead;
	pcap_dumper_t *dumper; /* NULL: summary lines on stdout */
	unsigned long frames;
	int err;               /* writing failed (errno) */
};

static int sink_chunk(void *ctx, const uint8_t *body, size_t size)
{
	struct sink *k = ctx;
	size_t off = 0;
	struct dp_capture_rec rec;
	const uint8_t *frame;
	int ret;
	while ((ret = ctl_capture_next(body, size, &off, &rec, &frame)) > 0) {
		if (k->dumper) {
			struct pcap_pkthdr h = {
				.ts = { .tv_sec = (time_t)(rec.ts_ns / 1000000000ull),
					.tv_usec = (suseconds_t)(rec.ts_ns % 1000000000ull / 1000) },
				.caplen = rec.caplen,
				.len = rec.len,
			};
			pcap_dump((u_char *)k->dumper, &h, frame);
		} else {
			char line[512];
			ctl_capture_summary(&rec, frame, line, sizeof(line));
			printf("%s\n", line);
		}
		k->frames++;
	}
	if (ret < 0) {
		fprintf(stderr, "vxctl: capture: malformed record from the daemon\n");
		return -1;
	}
	/* Flushed per chunk: a pipe reader sees frames as they come. */
	int bad = k->dumper ? pcap_dump_flush(k->dumper) : fflush(stdout);
	if (bad) {
		k->err = errno ? errno : EIO;
		return -1; /* e.g. the reader of our stdout went away: stop */
	}
	return 0;
}

static int open_sink(struct sink *k, const struct ctl_capture *cap)
{
	if (!(cap->given & CTL_CK_FILE))
		return 0;
	k->dead = pcap_open_dead(DLT_EN10MB, CTL_CAPTURE_SNAPLEN);
	if (!k->dead) {
		fprintf(stderr, "vxctl: capture: out of memory\n");
		return -1;
	}
	/* "-" is stdout for pcap_dump_open, as for tcpdump -w. */
	k->dumper = pcap_dump_open(k->dead, cap->file);
	if (!k->dumper) {
		fprintf(stderr, "vxctl: capture: %s\n", pcap_geterr(k->dead));
		pcap_close(k->dead);
		return -1;
	}
	return 0;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN); /* a gone reader shows as a write error */
}

int vxctl_capture(const char *socket_path, int argc, const char *const *argv,
		  const struct ctl_capture *cap)
{
	struct sink k = { 0 };
	if (open_sink(&k, cap) < 0)
		return CTL_STATUS_REFUSED;
	install_signals();
	struct ctl_stream_client sc = { .chunk = sink_chunk, .ctx = &k, .stop = &stop_requested };
	int status = CTL_STATUS_REFUSED;
	char *text = NULL;
	int ret = ctl_proto_call_stream(socket_path, argc, argv, false, &sc, &status, &text);
	if (k.dumper) {
		if (pcap_dump_flush(k.dumper) && !k.err)
			k.err = errno ? errno : EIO;
		pcap_dump_close(k.dumper);
		pcap_close(k.dead);
	} else {
		fflush(stdout);
	}
	if (ret) {
		fprintf(stderr, "vxctl: cannot reach vxswitchd at %s: %s\n", socket_path, strerror(-ret));
		return CTL_STATUS_UNREACHABLE;
	}
	if (status == CTL_STATUS_UNREACHABLE)
		fputs(text, stderr);
	else
		fprintf(stderr, "%s%s", status ? "vxctl: " : "", text);
	free(text);
	if (k.err) {
		fprintf(stderr, "vxctl: capture: writing output: %s\n", strerror(k.err));
		return CTL_STATUS_REFUSED;
	}
	return status;
}
