# fill_work.sh: writes past the workspace quota: 25 files of 8 MB of zeros
# (/work/fill-N.bin, by `head -c`), each well under the file-size limit,
# stopping at the first write that fails.
#
# Expected status: disk_full under a policy with [files] workspace_mb
# (test_limits.py: 20 MiB).
#
# Bound when run bare: 200 MB in /work (only run it bare where /work is a
# scratch directory), then exit 0.
i=1
while [ "$i" -le 25 ]; do
	head -c 8000000 /dev/zero > "/work/fill-$i.bin" || exit 1
	i=$((i + 1))
done
