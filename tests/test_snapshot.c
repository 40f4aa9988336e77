/* test_snapshot.c: being written (issue 3). */
#include <criterion/criterion.h>
