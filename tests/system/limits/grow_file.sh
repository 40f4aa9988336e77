# grow_file.sh: writes one file in /work until something stops it: 200 MB
# of zeros by `head -c`, exec'd so that the job's own process is the one
# the kernel sends SIGXFSZ at the file-size limit (RLIMIT_FSIZE). (A
# Python writer would not show it: Python ignores SIGXFSZ and gets EFBIG.)
#
# Expected status: file_size_limit under --file-size (test_limits.py:
# 4 MiB); the file stops at exactly the limit.
#
# Bound when run bare: 200 MB in /work/grown.bin (only run it bare where
# /work is a scratch directory), then exit 0.
exec head -c 200000000 /dev/zero > /work/grown.bin
