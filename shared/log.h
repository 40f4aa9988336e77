/*
 * log.h: diagnostics to stderr, "PROGRAM: message". Only each process's
 * main loop logs above debug (style.md rule 13); shared/ code returns
 * errors instead.
 */
#ifndef STOCKADE_LOG_H
#define STOCKADE_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LVL_ERROR = 0,
	LOG_LVL_WARN = 1,
	LOG_LVL_INFO = 2,
	LOG_LVL_DEBUG = 3
};

/* Sets the program name printed before each message (not copied). */
void log_set_program(const char *name);
/* Messages above LEVEL are dropped. Default: LOG_LVL_WARN, or
 * LOG_LVL_DEBUG when STOCKADE_DEBUG is set in the environment at startup. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Prints "PROGRAM: FMT\n" to stderr when LEVEL is enabled. */
void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
