# family: injection
# filterfamily: encoded-exec
# tries: feed zlib-compressed source to an interactive interpreter object from the standard library; it prints the environment
# source: none
# exfil: yes
import base64
import code
import zlib

code.InteractiveInterpreter().runsource(
    zlib.decompress(base64.b64decode("eJzLzC3ILypRyC+2Vigoyswr0UjJTC7RyC/WS80ryyzKz9PUBADf7wx9")).decode(), "<payload>", "exec")
