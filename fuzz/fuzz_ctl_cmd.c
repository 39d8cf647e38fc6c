/* Fuzz the vxctl command language: bytes -> words -> ctl_cmd_parse; every
 * accepted command must format, and the formatted text must parse back to
 * the same struct (the round-trip property the unit tests check on chosen
 * cases).  The same bytes also go through the config-file parser and the
 * request decoder, which must never crash whatever they are fed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_config.h"
#include "ctl/ctl_proto.h"

static void check_round_trip(char *line)
{
	char *words[CTL_MAX_WORDS + 1];
	struct ctl_cmd cmd, again;
	struct ctl_err err;

	int n = ctl_split_words(line, words, CTL_MAX_WORDS + 1);
	if (n < 0)
		return;
	if (ctl_cmd_parse(n, (const char *const *)words, &cmd, &err)) {
		/* a refusal names a word within the command or just after it */
		if (err.word < 1 || err.word > n + 1 || !err.msg[0] || strchr(err.msg, '\n'))
			abort();
		return;
	}
	char text[4096];
	int len = ctl_cmd_format(&cmd, text, sizeof(text));
	if (len < 0 || (size_t)len != strlen(text))
		abort();
	n = ctl_split_words(text, words, CTL_MAX_WORDS + 1);
	if (n < 0 || ctl_cmd_parse(n, (const char *const *)words, &again, &err))
		abort();
	if (!ctl_cmd_equal(&cmd, &again))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 8192)
		return 0;
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	check_round_trip(line);
	free(line);

	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	if (ctl_config_parse("fuzz", (const char *)data, size, &cfg, err, sizeof(err)) == 0)
		ctl_config_release(&cfg);

	struct ctl_request req;
	int used = ctl_proto_decode_request(data, size, &req);
	if (used > 0) {
		struct ctl_cmd cmd;
		if ((size_t)used > size || req.argc < 1 || req.argc > CTL_MAX_WORDS)
			abort();
		ctl_cmd_parse(req.argc, req.argv, &cmd, NULL);
		if (req.batch && (req.text < (const char *)data || req.text + req.text_len > (const char *)data + used))
			abort(); /* the text lies inside the request */
		if (req.batch && ctl_config_parse_batch(req.argv[0], req.text, req.text_len, &cfg, err, sizeof(err)) == 0)
			ctl_config_release(&cfg);
	}
	return 0;
}
