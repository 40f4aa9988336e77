# family: injection
# filterfamily: alt-apis
# tries: start cat on the host /tmp canary through asyncio's process API instead of the process module
# source: none
# exfil: yes
import asyncio
import sys


async def main():
    proc = await asyncio.create_subprocess_exec("cat", sys.argv[3])
    await proc.wait()

asyncio.run(main())
