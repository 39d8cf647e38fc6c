#include "packet/drop_reason.h"

#include <string.h>

static const char *const drop_reason_names[DROP_REASON_COUNT] = {
#define DROP_REASON_NAME(name, str) [DROP_##name] = str,
	DROP_REASONS(DROP_REASON_NAME)
#undef DROP_REASON_NAME
};

const char *drop_reason_name(enum drop_reason reason)
{
	if ((unsigned)reason >= DROP_REASON_COUNT)
		return "invalid";
	return drop_reason_names[reason];
}

enum drop_reason drop_reason_from_name(const char *name)
{
	for (unsigned i = 0; i < DROP_REASON_COUNT; i++)
		if (strcmp(drop_reason_names[i], name) == 0)
			return (enum drop_reason)i;
	return DROP_REASON_COUNT;
}
