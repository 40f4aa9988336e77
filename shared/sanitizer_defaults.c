/*
 * The sanitizer runtimes' default options for stockade and
 * stockade-launcher in a sanitized build (build-sanitize/, `tools/bootstrap
 * sanitize`; docs/reliability.md). meson.build compiles this file into
 * the two programs only when b_sanitize is not "none".
 *
 * The launcher is started with an empty environment (broker/jobs/spawner.c),
 * and tests start the broker with a scrubbed one, so ASAN_OPTIONS and
 * UBSAN_OPTIONS may never reach them: these defaults make any report
 * end the process with SIGABRT, which the broker (for its launcher) and
 * the tests (for the broker) see as a crash. Leak checking is off by
 * default: both programs confine themselves (Landlock, seccomp), and
 * LeakSanitizer then cannot read /proc/self/task or ptrace its threads
 * and ends the process with a fatal error of its own. The variables,
 * when set, still override each option (the runtimes read them after
 * these defaults).
 */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

/* Called by AddressSanitizer's runtime before main; returns a static
 * string of its options ("name=value" separated by ':'; see the
 * runtime's ASAN_OPTIONS=help=1). */
const char *
__asan_default_options(void)
{
	return "abort_on_error=1:halt_on_error=1:detect_leaks=0";
}

/* Called by UndefinedBehaviorSanitizer's runtime before main: any
 * report halts (it would otherwise print and go on) with a stack. */
const char *
__ubsan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}
