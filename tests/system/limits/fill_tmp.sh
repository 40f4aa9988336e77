# fill_tmp.sh: fills /tmp: 200 MB of zeros into /tmp/fill.bin by `head -c`
# (exec'd: the job is head itself), which fails with ENOSPC when the jail's
# /tmp tmpfs is full and exits 1 with "No space left on device".
#
# Expected status: disk_full under --tmp-size (test_limits.py: 16 MiB).
#
# Bound when run bare: 200 MB in /tmp/fill.bin (left there: remove it),
# then exit 0.
exec head -c 200000000 /dev/zero > /tmp/fill.bin
