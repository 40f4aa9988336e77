/* test_confine.c: being written (issue 3). */
#include <criterion/criterion.h>
