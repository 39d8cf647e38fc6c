/* vxctl: the command-line client of vxswitchd.
 *
 *   vxctl [ -s SOCKET ] [ -j ] COMMAND
 *
 * The command is checked here with the daemon's own parser first, so a typo
 * gets the same one-line error without a round trip (and without a daemon).
 * Exit status: 0 done, 1 refused (parse error or by the daemon), 2 the
 * daemon cannot be reached, or turned us away ("vxswitchd: too many
 * control clients (64), try again", printed as the daemon words it). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/vxctl_capture.h"
#include "ctl/ctl_cmd.h"
#include "ctl/ctl_proto.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vxctl [ OPTIONS ] COMMAND\n"
		"\n"
		"OPTIONS := { -s | --socket } PATH   control socket (default %s)\n"
		"         | { -j | --json }          JSON output, like iproute2's -j\n"
		"         | { -h | --help }          this text\n"
		"\n"
		"%s"
		"\n"
		"Exit status: 0 done, 1 command refused (parse error or by the daemon),\n"
		"2 cannot reach the daemon.\n",
		CTL_DEFAULT_SOCKET, ctl_cmd_grammar());
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *socket_path = CTL_DEFAULT_SOCKET;
	bool json = false;
	int opt;

	/* '+': options end at the first word of the command. */
	while ((opt = getopt_long(argc, argv, "+s:jh", options, NULL)) != -1) {
		switch (opt) {
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CTL_STATUS_OK;
		default:
			fprintf(stderr, "vxctl: try 'vxctl --help'\n");
			return CTL_STATUS_REFUSED;
		}
	}
	int n_words = argc - optind;
	const char *const *words = (const char *const *)argv + optind;
	if (n_words == 0) {
		usage(stderr);
		return CTL_STATUS_REFUSED;
	}

	struct ctl_cmd cmd;
	struct ctl_err err;
	if (ctl_cmd_parse(n_words, words, &cmd, &err)) {
		fprintf(stderr, "vxctl: %s\n", err.msg);
		return CTL_STATUS_REFUSED;
	}

	if (cmd.verb == CTL_CAPTURE) {
		if (json) {
			fprintf(stderr, "vxctl: capture has no JSON output (-w FILE writes pcap)\n");
			return CTL_STATUS_REFUSED;
		}
		return vxctl_capture(socket_path, n_words, words, &cmd.capture);
	}

	int status;
	char *text;
	int ret = ctl_proto_call(socket_path, n_words, words, json, &status, &text);
	if (ret == -E2BIG) {
		fprintf(stderr, "vxctl: command longer than %d bytes\n", CTL_REQ_MAX_BODY);
		return CTL_STATUS_REFUSED;
	}
	if (ret) {
		fprintf(stderr, "vxctl: cannot reach vxswitchd at %s: %s\n", socket_path,
			strerror(-ret));
		return CTL_STATUS_UNREACHABLE;
	}
	if (status == CTL_STATUS_OK) {
		fputs(text, stdout);
	} else if (status == CTL_STATUS_UNREACHABLE) {
		fputs(text, stderr); /* the daemon's own "vxswitchd: ..." line */
	} else {
		fputs("vxctl: ", stderr);
		fputs(text, stderr);
	}
	free(text);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "vxctl: writing output: %s\n", strerror(errno));
		return CTL_STATUS_REFUSED;
	}
	return status;
}
