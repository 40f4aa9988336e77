/* spawner.c: being written (issue 3). */
#include "fsapi.h"
