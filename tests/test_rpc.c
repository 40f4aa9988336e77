/* test_rpc.c: being written (issue 3). */
#include <criterion/criterion.h>
