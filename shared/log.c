/* log.c: see log.h. The level and name are the only process-wide state. */
#include "log.h"

#include <errno.h>
#include <stdio.h>

static const char *log_program = "stockade";
static enum log_level log_level = LOG_LVL_WARN;

void
log_set_program(const char *name)
{
	log_program = name;
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level
log_get_level(void)
{
	return log_level;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int saved = errno;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write so lines from the two processes do not interleave. */
	fprintf(stderr, "%s: %s\n", log_program, line);
	errno = saved;
}
